import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const run = promisify(execFile);

// vitest resolves CommonJS named exports that Node's own ESM loader does not: a service process
// would die at import while every in-process test passes.
it('the library loads in a plain Node process, as a service imports it', async () => {
  const index = fileURLToPath(new URL('../src/index.ts', import.meta.url));
  const { stdout } = await run(process.execPath, [
    '--input-type=module',
    '-e',
    `const outbox = await import(${JSON.stringify(index)}); console.log(typeof outbox.startRelay);`,
  ]);
  expect(stdout.trim()).toBe('function');
});
