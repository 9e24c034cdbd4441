/**
 * The command blocks of a markdown document and what the document says they print, so a test
 * can run a document as written and check its promises. The conventions, which read as plain
 * prose to a learner:
 *
 * - Every ```sh block runs, from the repository root, in order, in one bash session (a variable
 *   one block sets is there in the next), with `set -euo pipefail`: a failing command fails
 *   the document.
 * - A block right after the line `<!-- not run by the docs test: <why> -->` is not run (it
 *   starts the system, clones the repository, or runs a scenario on a stack of its own).
 * - A paragraph after a block that starts with "You should see" (bold or not) lists, in
 *   backticks, text the block prints; each must appear in the block's output. `…` inside one
 *   stands for anything on that line (an id, a timing).
 */

export interface CommandBlock {
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** The `##` heading the block sits under. */
  readonly section: string;
  readonly commands: string;
  /** Why the block is not run, when the document says so; undefined when it runs. */
  readonly notRun?: string;
  /** Backticked text of the "You should see" paragraph after the block. */
  readonly expected: readonly string[];
}

const notRunMarker = /^<!--\s*not run by the docs test:\s*(.+?)\s*-->$/;
const youShouldSee = /^(\*\*)?you should see\b/i;
const codeSpan = /`([^`]+)`/g;

/** The ```sh blocks of `markdown`; with `section`, only those under that `##` heading. */
export function commandBlocks(markdown: string, section?: string): CommandBlock[] {
  const lines = markdown.split('\n');
  const blocks: CommandBlock[] = [];
  let heading = '';
  let notRun: string | undefined;
  for (let index = 0; index < lines.length; index++) {
    const text = (lines[index] ?? '').trim();
    if (text.startsWith('## ')) heading = text.slice(3).trim();
    const marker = notRunMarker.exec(text);
    if (marker) {
      notRun = marker[1];
      continue;
    }
    if (!text.startsWith('```')) {
      if (text !== '') notRun = undefined;
      continue;
    }
    const language = text.slice(3).trim();
    const start = index;
    const body: string[] = [];
    for (index++; index < lines.length && !(lines[index] ?? '').trim().startsWith('```'); index++)
      body.push(lines[index] ?? '');
    if (language === 'sh' && (section === undefined || heading === section)) {
      blocks.push({
        line: start + 1,
        section: heading,
        commands: dedent(body).join('\n'),
        ...(notRun === undefined ? {} : { notRun }),
        expected: expectedAfter(lines, index + 1),
      });
    }
    notRun = undefined;
  }
  return blocks;
}

/** The backticked text of the "You should see" paragraph between this block and the next. */
function expectedAfter(lines: readonly string[], from: number): string[] {
  for (let index = from; index < lines.length; index++) {
    const text = (lines[index] ?? '').trim();
    if (text.startsWith('```') || text.startsWith('#') || notRunMarker.test(text)) return [];
    if (!youShouldSee.test(text)) continue;
    const paragraph: string[] = [];
    for (let at = index; at < lines.length && (lines[at] ?? '').trim() !== ''; at++)
      paragraph.push((lines[at] ?? '').trim());
    return [...paragraph.join(' ').matchAll(codeSpan)].map(([, span = '']) => span);
  }
  return [];
}

function dedent(lines: readonly string[]): string[] {
  const indents = lines.filter((l) => l.trim() !== '').map((l) => /^ */.exec(l)?.[0].length ?? 0);
  const common = indents.length === 0 ? 0 : Math.min(...indents);
  return lines.map((l) => l.slice(common));
}

/** Whether `output` holds `expected`, where `…` stands for anything on one line. */
export function printed(output: string, expected: string): boolean {
  const pattern = expected
    .split('…')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^\\n]*');
  return new RegExp(pattern).test(output);
}

/** Where block `n` starts in the transcript, with the time it started (epoch seconds). */
const blockMarker = (n: number) => new RegExp(`<<<docs-test block ${n} at ([0-9.]+)>>>`);

/**
 * One bash script running `blocks` in order: the transcript splits back into each block's
 * output at the markers it prints, and the last marker printed names the block that failed.
 * Each marker carries the time it was printed, so the blocks' durations can be told.
 */
export function sessionScript(blocks: readonly CommandBlock[]): string {
  const marker = (n: number) => `printf '\\n<<<docs-test block ${n} at %s>>>\\n' "$(date +%s.%N)"`;
  return [
    'set -euo pipefail',
    // One stream, in the order it was printed.
    'exec 2>&1',
    ...blocks.flatMap((block, n) => [marker(n), block.commands]),
    marker(blocks.length),
  ].join('\n');
}

/** Each started block's output, by its index, with its seconds (undefined if it did not end). */
export function blocksOf(
  transcript: string,
  count: number,
): { output: string; seconds: number | undefined }[] {
  const blocks: { output: string; seconds: number | undefined }[] = [];
  for (let n = 0; n < count; n++) {
    const start = blockMarker(n).exec(transcript);
    if (start === null) break;
    const from = start.index + start[0].length;
    const end = blockMarker(n + 1).exec(transcript.slice(from));
    blocks.push({
      output: transcript.slice(from, end === null ? undefined : from + end.index).trim(),
      seconds: end === null ? undefined : Number(end[1]) - Number(start[1]),
    });
  }
  return blocks;
}

/** Each block's output, by its index; a block that never started has none. */
export function outputsByBlock(transcript: string, count: number): string[] {
  return blocksOf(transcript, count).map((block) => block.output);
}
