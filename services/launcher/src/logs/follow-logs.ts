import { closeSync, openSync, readSync, statSync } from 'node:fs';

/** A log file being followed: where it is, and how far it has been read. */
interface Followed {
  readonly component: string;
  readonly file: string;
  offset: number;
  /** The end of a line still being written. */
  partial: string;
}

export interface FollowLogsOptions {
  readonly files: readonly { component: string; file: string }[];
  /** Called with every complete line, in the order each file has them. */
  readonly onLine: (component: string, line: string) => void;
  /** `start`: everything the files hold, then what follows; `end`: only what follows. */
  readonly from: 'start' | 'end';
  readonly intervalMs?: number;
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0; // Not written yet: a role that has not started.
  }
}

/** Reads what was appended to the file since the last read, and hands on its complete lines. */
function readNew(followed: Followed, onLine: FollowLogsOptions['onLine']): void {
  const size = sizeOf(followed.file);
  // Smaller than what was read: the stack was brought down and up again; read it anew.
  if (size < followed.offset) followed.offset = 0;
  if (size === followed.offset) return;
  const buffer = Buffer.alloc(size - followed.offset);
  const fd = openSync(followed.file, 'r');
  try {
    readSync(fd, buffer, 0, buffer.length, followed.offset);
  } finally {
    closeSync(fd);
  }
  followed.offset = size;
  const lines = (followed.partial + buffer.toString('utf8')).split('\n');
  followed.partial = lines.pop() ?? '';
  for (const line of lines) if (line.length > 0) onLine(followed.component, line);
}

/**
 * Follows log files that processes append to (`tail -F` for several at once): every line, as
 * it is completed, goes to `onLine`. A file that does not exist yet is waited for.
 */
export function followLogs(options: FollowLogsOptions): { stop(): void } {
  const followed: Followed[] = options.files.map(({ component, file }) => ({
    component,
    file,
    offset: options.from === 'end' ? sizeOf(file) : 0,
    partial: '',
  }));
  const readAll = (): void => {
    for (const one of followed) readNew(one, options.onLine);
  };
  readAll();
  const timer = setInterval(readAll, options.intervalMs ?? 200);
  return {
    stop() {
      clearInterval(timer);
      readAll();
    },
  };
}
