import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { findJava, resolveKafkaClasspath } from '@outbox-inbox/infra';
import type { IHeaders } from 'kafkajs';
import type { PoisonMessage } from './poison-messages.ts';

/** Where a produced message landed on its topic. */
export interface Landed {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
}

type RawMessage = Pick<PoisonMessage, 'topic' | 'key' | 'value' | 'headers'>;

const producerSource = fileURLToPath(new URL('./java/RawProducer.java', import.meta.url));
/** Compiling the single-file program and connecting take a few seconds; sending is quick. */
const producerDeadlineMs = 120_000;

const base64 = (bytes: Buffer | null): string => (bytes === null ? '-' : bytes.toString('base64'));

function headerPairs(headers: IHeaders): string {
  const pairs: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    for (const one of Array.isArray(value) ? value : [value]) {
      if (one === undefined) continue;
      pairs.push(`${base64(Buffer.from(name))}:${base64(Buffer.from(one))}`);
    }
  }
  return pairs.join(',');
}

/** One stdin line of RawProducer.java: tab-separated, every byte string in base64. */
function line({ topic, key, value, headers }: RawMessage): string {
  return [topic, base64(key), base64(value), headerPairs(headers)].join('\t');
}

/**
 * Produces messages byte for byte with Kafka's own Java client (RawProducer.java, run from
 * source on the broker's classpath), so the corpus does not come from the JavaScript client
 * the services consume with. Kafka's default partitioner, one acknowledged send each; returns
 * where each landed, in order.
 */
export async function produceRaw(
  brokers: readonly string[],
  messages: readonly RawMessage[],
): Promise<Landed[]> {
  const child = spawn(
    findJava(),
    ['-cp', resolveKafkaClasspath(), producerSource, brokers.join(',')],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const deadline = setTimeout(() => child.kill('SIGKILL'), producerDeadlineMs);
  const exit = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve(code));
  });
  // A producer that died early closes its stdin: the exit code and stderr tell why.
  child.stdin.on('error', () => undefined);
  child.stdin.end(messages.map((message) => `${line(message)}\n`).join(''));
  const code = await exit.finally(() => clearTimeout(deadline));
  const acknowledged = stdout.split('\n').filter((row) => row !== '');
  if (code !== 0 || acknowledged.length !== messages.length) {
    throw new Error(
      `the Java producer exited ${code} after ${acknowledged.length} of ${messages.length} messages: ${stderr.slice(-2000)}`,
    );
  }
  return acknowledged.map((row, n) => {
    const [partition = '', offset = ''] = row.split('\t');
    return { topic: messages[n]?.topic ?? '', partition: Number(partition), offset };
  });
}
