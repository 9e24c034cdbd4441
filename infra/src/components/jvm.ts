/**
 * What the stack's JVM servers (Kafka, Kafka Connect) share: their JVM options, and the shape of
 * their logging (Kafka Connect's is the file infra/connect/log4j.properties, which its image
 * reads too).
 */

/**
 * A reload4j configuration for a JVM server of the stack: everything to stdout (the
 * component's log file), each logger named here at its level.
 */
export function consoleLog4j(levels: Readonly<Record<string, 'ERROR' | 'WARN' | 'INFO'>>): string {
  return [
    'log4j.rootLogger=INFO, stdout',
    'log4j.appender.stdout=org.apache.log4j.ConsoleAppender',
    'log4j.appender.stdout.layout=org.apache.log4j.PatternLayout',
    'log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n',
    ...Object.entries(levels).map(([logger, level]) => `log4j.logger.${logger}=${level}`),
    '',
  ].join('\n');
}

/** The JVM options of a long-running server: a fixed heap, and an exit (not a limp) when it runs out. */
export function serverJvmOptions(heapMb: number): string[] {
  return [
    `-Xms${heapMb}m`,
    `-Xmx${heapMb}m`,
    '-XX:+UseG1GC',
    '-XX:+ExitOnOutOfMemoryError',
    '-Djava.awt.headless=true',
  ];
}
