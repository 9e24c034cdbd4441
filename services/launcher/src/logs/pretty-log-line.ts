import { prettyFactory } from 'pino-pretty';

/**
 * One line of a role's log, as a person reads it: the component, the time, the level, the
 * message, then the fields, on one line. The roles log JSON (pino) so that machines can read
 * it; a line that is not JSON (a crash's stack trace, PostgreSQL) passes through as it is.
 */
export function prettyLogLine(options: {
  colorize: boolean;
  /** The widest component name, so the lines of several components line up. */
  width: number;
}): (component: string, line: string) => string {
  const pretty = prettyFactory({
    colorize: options.colorize,
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss.l',
    // The component names the process; kafkajs repeats its own clock and name on every line.
    ignore: 'pid,hostname,name,role,timestamp,logger',
    // `error` is a message string in these logs (kafkajs, the relay): keep it on the line.
    errorLikeObjectKeys: ['err'],
  });
  return (component, line) => {
    const prefix = `${component.padEnd(options.width)} │ `;
    const body = line.startsWith('{') ? pretty(line).trimEnd() : line;
    // An error's stack spans lines: each keeps the prefix, so a filter by component keeps it.
    return body
      .split('\n')
      .map((part) => `${prefix}${part}`)
      .join('\n');
  };
}
