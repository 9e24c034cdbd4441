import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { stack } from '../support/harness.ts';

const run = promisify(execFile);

// Every role process talks to Kafka through kafkajs; on Node 24 its request queue used to make
// each of them print a TimeoutNegativeWarning (see pnpm-workspace.yaml, patchedDependencies).
it('a kafkajs client that connects, asks and disconnects makes Node print no warning', async () => {
  const script = `
    const { Kafka, logLevel } = require('kafkajs');
    const admin = new Kafka({ brokers: process.argv.slice(1), logLevel: logLevel.NOTHING }).admin();
    admin.connect()
      .then(() => admin.listTopics())
      .then(() => admin.disconnect())
      .then(() => console.log('done'));
  `;
  const { stdout, stderr } = await run(process.execPath, ['-e', script, ...stack().kafkaBrokers], {
    cwd: new URL('..', import.meta.url),
  });
  expect(stdout.trim()).toBe('done');
  expect(stderr).not.toMatch(/Warning/);
});
