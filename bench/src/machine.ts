import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findRepoRoot, type Stack } from '@outbox-inbox/infra';
import { sql, type Kysely } from 'kysely';

export interface Machine {
  readonly date: string;
  readonly cpus: string;
  readonly memory: string;
  readonly os: string;
  readonly node: string;
  readonly postgres: string;
  readonly kafka: string;
  readonly load: string;
}

/** The facts a reader needs to weigh the numbers. */
export async function describeMachine(stack: Stack, db: Kysely<unknown>): Promise<Machine> {
  const cpus = os.cpus();
  const version = await sql<{ v: string }>`SELECT version() AS v`.execute(db);
  // The numbers mean little unless the server is as crash safe as a production one.
  const durability = await sql<{ fsync: string; full_page_writes: string }>`
    SELECT current_setting('fsync') AS fsync,
           current_setting('full_page_writes') AS full_page_writes`.execute(db);
  return {
    date: new Date().toISOString(),
    cpus: `${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown'}`,
    memory: `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    postgres: `${(version.rows[0]?.v ?? 'unknown').split(',')[0] ?? 'unknown'}; fsync ${
      durability.rows[0]?.fsync ?? '?'
    }, full_page_writes ${durability.rows[0]?.full_page_writes ?? '?'}`,
    kafka: kafkaVersion(stack),
    load: os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' / '),
  };
}

/** The broker logs its version at start ("Kafka version: 3.9.1"); the docker provider's image tag otherwise. */
function kafkaVersion(stack: Stack): string {
  const logFile = stack.logFile('kafka');
  try {
    const match = logFile ? /Kafka version: (\S+)/.exec(readFileSync(logFile, 'utf8')) : null;
    if (match?.[1]) return `Apache Kafka ${match[1]} (KRaft, one node)`;
  } catch {
    // fall through
  }
  // The local provider runs the jars infra/kafka/pom.xml resolves (kafka_2.13-<version>.jar).
  try {
    const pom = readFileSync(path.join(findRepoRoot(), 'infra', 'kafka', 'pom.xml'), 'utf8');
    const version = /<kafka\.version>([^<]+)</.exec(pom)?.[1];
    if (version) return `Apache Kafka ${version} (KRaft, one node; from infra/kafka/pom.xml)`;
  } catch {
    // fall through
  }
  return 'Apache Kafka (version unknown)';
}
