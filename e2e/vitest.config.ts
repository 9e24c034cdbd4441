import { defineConfig } from 'vitest/config';

/**
 * The scenarios that start a three-node Kafka cluster or Kafka Connect of their own. `./pnpm
 * test` runs them as a stage beside the other scenarios (e2e/suite/stages.ts): with
 * `E2E_PART=cluster-and-cdc` vitest runs these files, with `E2E_PART=rest` every other file,
 * without E2E_PART all of them. They never use the shared servers, so their part starts none.
 */
const clusterAndCdc = [
  'test/10-*.test.ts',
  'test/11-*.test.ts',
  'test/12-*.test.ts',
  'test/13-*.test.ts',
  'test/16-*.test.ts',
  'test/17-*.test.ts',
  'test/18-*.test.ts',
  'test/19-*.test.ts',
  'test/20-*.test.ts',
];
const everyFile = ['test/**/*.test.ts', 'src/**/*.test.ts', 'suite/**/*.test.ts'];

const part = process.env['E2E_PART'];
if (part !== undefined && part !== 'cluster-and-cdc' && part !== 'rest') {
  throw new Error(`E2E_PART must be cluster-and-cdc or rest, not "${part}"`);
}

export default defineConfig({
  test: {
    include: part === 'cluster-and-cdc' ? clusterAndCdc : everyFile,
    exclude: ['**/node_modules/**', ...(part === 'rest' ? clusterAndCdc : [])],
    globalSetup: [
      './src/report-global-setup.ts',
      ...(part === 'cluster-and-cdc' ? [] : ['./src/shared-servers-global-setup.ts']),
    ],
    // One scenario at a time: each runs eleven service processes, on the shared servers or its own.
    fileParallelism: false,
    testTimeout: 600_000,
    hookTimeout: 180_000,
    reporters: ['default'],
  },
});
