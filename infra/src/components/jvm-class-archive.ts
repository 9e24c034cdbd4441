import { spawnSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, renameSync, statSync, unlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Class data sharing for the stack's JVMs (Kafka, Kafka Connect). A broker loads some ten
 * thousand classes at every start; a tests' stack starts one for each test file and restarts
 * them in its scenarios, on two cores shared with everything else. Java 17 can write the
 * classes a JVM loaded into an archive when it exits (`-XX:ArchiveClassesAtExit`) and map that
 * archive at the next start (`-XX:SharedArchiveFile`), which skips parsing and verifying them.
 *
 * One archive per server, Java and classpath (Java checks the jars' paths too, so each clone
 * has its own), in the temp folder: nothing in the clone changes. Until it exists, each JVM
 * writes its own `.part` on a clean exit (a killed one writes nothing, or half); the next one to
 * start keeps the first part that Java accepts and removes the rest. A JVM that cannot use the
 * archive runs without it.
 */
export function classArchiveOptions(
  server: 'kafka' | 'connect',
  java: string,
  classpath: string,
  dir = classArchiveDir(),
): string[] {
  mkdirSync(dir, { recursive: true });
  const name = `${server}-${archiveKey(java, classpath)}`;
  const archive = path.join(dir, `${name}.jsa`);
  settleParts(dir, name, archive, java, classpath);
  if (exists(archive)) return [`-XX:SharedArchiveFile=${archive}`];
  return [`-XX:ArchiveClassesAtExit=${path.join(dir, `${name}.${randomUUID()}.part`)}`];
}

/**
 * The archive only for a JVM that must not write one (Kafka's storage tool: its classes are a
 * few of the broker's, and a part written from them could win over a broker's).
 */
export function existingClassArchive(
  server: 'kafka' | 'connect',
  java: string,
  classpath: string,
  dir = classArchiveDir(),
): string[] {
  const archive = path.join(dir, `${server}-${archiveKey(java, classpath)}.jsa`);
  return exists(archive) ? [`-XX:SharedArchiveFile=${archive}`] : [];
}

/** Outside the clone, like the other caches of the machine's tools. */
export function classArchiveDir(): string {
  return path.join(os.tmpdir(), 'outbox-inbox-jvm-classes');
}

/** A part this young may still be being written by a JVM on its way out. */
const PART_SETTLE_MS = 30_000;

function settleParts(
  dir: string,
  name: string,
  archive: string,
  java: string,
  classpath: string,
): void {
  const parts = readdirSync(dir).filter((f) => f.startsWith(`${name}.`) && f.endsWith('.part'));
  for (const part of parts) {
    const file = path.join(dir, part);
    const modified = modifiedAt(file);
    if (modified === undefined || Date.now() - modified < PART_SETTLE_MS) continue;
    try {
      if (!exists(archive) && javaAccepts(java, classpath, file)) renameSync(file, archive);
      else unlinkSync(file);
    } catch {
      // Another stack starting at the same moment settled it first.
    }
  }
}

/** Java maps the archive or refuses to start (`-Xshare:on`): a half-written one is refused. */
function javaAccepts(java: string, classpath: string, file: string): boolean {
  const probe = spawnSync(
    java,
    [`-XX:SharedArchiveFile=${file}`, '-Xshare:on', '-cp', classpath, '-version'],
    {
      stdio: 'ignore',
      timeout: 30_000,
    },
  );
  return probe.status === 0;
}

const keys = new Map<string, string>();

/** Which Java and which jars: a new JDK or another Kafka version gets an archive of its own. */
function archiveKey(java: string, classpath: string): string {
  const known = keys.get(`${java}\n${classpath}`);
  if (known !== undefined) return known;
  const hash = createHash('sha256');
  const version = spawnSync(java, ['-version'], { encoding: 'utf8' });
  hash.update(`${java}\n${version.stderr ?? ''}\n${classpath}\n`);
  for (const entry of classpath.split(path.delimiter)) {
    if (entry.endsWith('/*')) {
      const libs = entry.slice(0, -2);
      for (const jar of readdirSync(libs).sort()) {
        hash.update(`${jar}:${statSync(path.join(libs, jar)).size}\n`);
      }
    } else {
      // A jar built here (Connect's own): rebuilt, it is another jar.
      const built = statSync(entry, { throwIfNoEntry: false });
      hash.update(`${entry}:${built?.size ?? 0}:${built?.mtimeMs ?? 0}\n`);
    }
  }
  const key = hash.digest('hex').slice(0, 16);
  keys.set(`${java}\n${classpath}`, key);
  return key;
}

function modifiedAt(file: string): number | undefined {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

function exists(file: string): boolean {
  return modifiedAt(file) !== undefined;
}
