import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { classArchiveOptions, existingClassArchive } from '../src/components/jvm-class-archive.ts';
import { findJava, resolveKafkaClasspath } from '../src/components/kafka.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'kafka-class-archive-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const java = findJava();
const classpath = resolveKafkaClasspath();
const aMinuteAgo = new Date(Date.now() - 60_000);

/** Runs one of Kafka's own tools as a broker would start, with the archive options it got. */
function runKafkaTool(options: readonly string[]): number | null {
  const run = spawnSync(
    java,
    [...options, '-cp', classpath, 'kafka.tools.StorageTool', 'random-uuid'],
    { encoding: 'utf8', timeout: 60_000 },
  );
  return run.status;
}

it('writes a part on the first start, keeps the first one Java accepts and drops a broken one', () => {
  const first = classArchiveOptions('kafka', java, classpath, dir);
  expect(first).toHaveLength(1);
  expect(first[0]).toMatch(/^-XX:ArchiveClassesAtExit=.*\.part$/);
  expect(existingClassArchive('kafka', java, classpath, dir)).toEqual([]);
  const part = (first[0] as string).slice('-XX:ArchiveClassesAtExit='.length);
  const name = path.basename(part).split('.')[0] as string;

  // The half-written part of a killed broker: Java refuses it, so it is dropped, not kept.
  const broken = path.join(dir, `${name}.broken.part`);
  writeFileSync(broken, 'not an archive');
  utimesSync(broken, aMinuteAgo, aMinuteAgo);
  expect(classArchiveOptions('kafka', java, classpath, dir)[0]).toMatch(/ArchiveClassesAtExit/);
  expect(readdirSync(dir)).not.toContain(path.basename(broken));

  // The JVM writes the classes it loaded when it exits cleanly.
  expect(runKafkaTool(first)).toBe(0);
  expect(readdirSync(dir)).toContain(path.basename(part));
  // Too young to judge (it may still be being written): left for later, and the next broker
  // writes a part of its own.
  expect(classArchiveOptions('kafka', java, classpath, dir)[0]).toMatch(/ArchiveClassesAtExit/);
  expect(readdirSync(dir)).toContain(path.basename(part));

  utimesSync(part, aMinuteAgo, aMinuteAgo);
  const settled = classArchiveOptions('kafka', java, classpath, dir);
  expect(settled).toEqual([`-XX:SharedArchiveFile=${path.join(dir, `${name}.jsa`)}`]);
  expect(existingClassArchive('kafka', java, classpath, dir)).toEqual(settled);
  expect(readdirSync(dir).filter((f) => f.endsWith('.part'))).toEqual([]);

  // And Java maps it: with -Xshare:on it would refuse to start otherwise.
  expect(runKafkaTool([...settled, '-Xshare:on'])).toBe(0);
});
