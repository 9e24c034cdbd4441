import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

// The core entry point is what a service needs to write, publish and receive events. The
// services of this repository are its fixture: a name belongs in the core only when one of
// them imports it, or when it is declared or named beside a name they import (the options and
// dependency types of a function they call, the error it throws). Anything else goes to a
// subpath (/ops, /cdc, /trace, /kafka-port, /testing) or stays internal.

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const repoDir = join(packageDir, '..', '..');
const coreEntry = join(packageDir, 'src', 'index.ts');
const coreBudget = 40;
const fixtureServices = [
  'services/order-service/src',
  'services/payment-service/src',
  'services/launcher/src',
  'packages/service-kit/src',
  'examples/minimal/src',
];
/** Defaults a caller reads to build on: every other `DEFAULT_*` is an internal. */
const publicDefaults = ['DEFAULT_INBOX_PROCESSOR_OPTIONS', 'DEFAULT_STALL_AFTER_MS'];
/** Internals that once leaked from the root; no entry point may offer them again. */
const internals = [
  'cdcConnectorConfig',
  'heartbeatTopic',
  'replicationName',
  'connectorFailure',
  'INBOX_CHANNEL',
  'RETENTION_LOCK_ID',
  'OUTBOX_MIGRATION_TABLE',
  'parseMessage',
];

interface Export {
  name: string;
  module: string;
}

function namesIn(list: string): string[] {
  return list
    .split(',')
    .map((part) => part.trim().replace(/^type\s+/, ''))
    .filter((part) => part !== '' && !part.startsWith('//'))
    .map((part) => part.replace(/^.*\s+as\s+/, ''));
}

function exportsOf(entry: string): Export[] {
  const source = readFileSync(entry, 'utf8');
  return [...source.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}\s*from\s*'([^']+)'/g)].flatMap(
    ([, list = '', from = '']) =>
      namesIn(list).map((name) => ({ name, module: join(dirname(entry), from) })),
  );
}

function sourceFiles(dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

function importedFromCore(): Map<string, string> {
  const importers = new Map<string, string>();
  for (const file of fixtureServices.flatMap((dir) => sourceFiles(join(repoDir, dir)))) {
    const source = readFileSync(file, 'utf8');
    for (const [, list = ''] of source.matchAll(
      /import\s+(?:type\s+)?\{([^}]*)\}\s*from\s*'@outbox-inbox\/outbox'/g,
    )) {
      for (const name of namesIn(list)) importers.set(name, relative(repoDir, file));
    }
  }
  return importers;
}

it(`the core entry point exports at most ${coreBudget} names`, () => {
  const names = exportsOf(coreEntry).map((entry) => entry.name);
  expect(new Set(names).size).toBe(names.length);
  expect(names.length).toBeLessThanOrEqual(coreBudget);
});

it('every name of the core is one a service of this repository uses, or named beside one', () => {
  const core = exportsOf(coreEntry);
  const imported = importedFromCore();
  // A service importing from the root what the root does not offer fails its type check;
  // here the concern is the other way round.
  const reached = new Set(core.filter((entry) => imported.has(entry.name)).map((e) => e.name));
  let grew = true;
  while (grew) {
    grew = false;
    const reachedModules = new Set(
      core.filter((entry) => reached.has(entry.name)).map((e) => e.module),
    );
    const texts = [...reachedModules].map((module) => readFileSync(module, 'utf8'));
    for (const entry of core) {
      if (reached.has(entry.name)) continue;
      const named = new RegExp(`\\b${entry.name}\\b`);
      if (reachedModules.has(entry.module) || texts.some((text) => named.test(text))) {
        reached.add(entry.name);
        grew = true;
      }
    }
  }
  const unused = core.map((entry) => entry.name).filter((name) => !reached.has(name));
  expect(unused, 'core exports no service uses: move them to a subpath or unexport them').toEqual(
    [],
  );
});

it('no entry point offers an internal', () => {
  const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as {
    exports: Record<string, { default: string }>;
  };
  const entries = Object.values(manifest.exports).map((target) => join(packageDir, target.default));
  expect(entries.length).toBeGreaterThanOrEqual(8);
  const isInternal = (name: string) =>
    internals.includes(name) || (name.startsWith('DEFAULT_') && !publicDefaults.includes(name));
  const leaks = entries.flatMap((entry) =>
    exportsOf(entry)
      .filter((e) => isInternal(e.name))
      .map((e) => `${relative(packageDir, entry)}: ${e.name}`),
  );
  expect(leaks).toEqual([]);
});
