import { spawn } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import path from 'node:path';
import type { Stage } from './stages.ts';

/** How a stage ended, and when: what the timing table is made of. */
export interface StageResult {
  readonly name: string;
  readonly passed: boolean;
  /** Seconds from the suite's start. */
  readonly startedAt: number;
  readonly seconds: number;
  readonly logFile: string;
  /** vitest's JSON report, for a vitest stage that wrote one. */
  readonly vitestReport: string | undefined;
  /** A stage of resilience scenarios (`Stage.scenarios`). */
  readonly scenarios: boolean;
}

/** A file-system-safe name: `outbox on platformatic` → `outbox-on-platformatic`. */
export function slug(name: string): string {
  return name.replaceAll(/[^a-z0-9]+/gi, '-').toLowerCase();
}

/** The workspace's own binary of `command` when it has one (vitest, turbo, prettier). */
function resolveCommand(root: string, command: string): string {
  const local = path.join(root, 'node_modules', '.bin', command);
  return existsSync(local) ? local : command;
}

/**
 * Runs one stage with its output to `<logDir>/<slug>.log` (two stages at once would interleave
 * on the terminal); resolves when it exits, never rejects.
 */
export function runStage(
  stage: Stage,
  options: { root: string; logDir: string; suiteStart: number },
): Promise<StageResult> {
  const logFile = path.join(options.logDir, `${slug(stage.name)}.log`);
  const vitestReport = stage.vitest
    ? path.join(options.logDir, `${slug(stage.name)}.json`)
    : undefined;
  const args = vitestReport
    ? [...stage.args, '--reporter=default', '--reporter=json', `--outputFile.json=${vitestReport}`]
    : [...stage.args];
  const startedAt = Date.now();
  const log = createWriteStream(logFile);
  log.write(`$ (cd ${stage.cwd} && ${stage.command} ${args.join(' ')})\n`);
  // Logs are read as files and in CI's transcript: no colour codes.
  const env = { ...process.env };
  delete env['FORCE_COLOR'];
  const child = spawn(resolveCommand(options.root, stage.command), args, {
    cwd: path.join(options.root, stage.cwd),
    env: { ...env, ...stage.env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.pipe(log, { end: false });
  child.stderr.pipe(log, { end: false });
  return new Promise((resolve) => {
    let finished = false;
    // A child that could not start emits both 'error' and 'close': the first one counts.
    const finish = (passed: boolean, why?: string) => {
      if (finished) return;
      finished = true;
      if (why) log.write(`\n${why}\n`);
      log.end(() =>
        resolve({
          name: stage.name,
          passed,
          startedAt: (startedAt - options.suiteStart) / 1000,
          seconds: (Date.now() - startedAt) / 1000,
          logFile,
          vitestReport: vitestReport && existsSync(vitestReport) ? vitestReport : undefined,
          scenarios: stage.scenarios ?? false,
        }),
      );
    };
    child.once('error', (error) => finish(false, `could not start: ${error.message}`));
    child.once('close', (code, signal) =>
      finish(code === 0, code === 0 ? undefined : `exited with ${signal ?? String(code)}`),
    );
  });
}
