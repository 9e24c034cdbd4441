import { spawn, spawnSync, type ChildProcessByStdio } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
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
/** Starting the JVM and connecting take seconds on a busy machine; each send is quick. */
const batchDeadlineMs = 120_000;
/**
 * A JVM that lives a few seconds: the quick first-tier compiler only and the simplest
 * collector start it in a fraction of the time the server defaults take on two busy cores.
 */
const shortLivedJvm = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-Xmx256m'];

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

let compiled: string | undefined;

/**
 * RawProducer compiled once into a folder named by the source's hash, shared by every test
 * process: run from source, each start would compile it again, which took up to 30 s of a
 * loaded CI machine per call. Compiled into a fresh folder and renamed into place, so two
 * processes compiling at once both end with a whole class file.
 */
function compiledProducer(classpath: string): string {
  if (compiled !== undefined) return compiled;
  const source = readFileSync(producerSource);
  const hash = createHash('sha256').update(source).update(classpath).digest('hex').slice(0, 16);
  const target = path.join(tmpdir(), `outbox-inbox-raw-producer-${hash}`);
  if (!existsSync(path.join(target, 'RawProducer.class'))) {
    const scratch = mkdtempSync(`${target}.tmp-`);
    const javac = process.env['JAVA_HOME']
      ? path.join(process.env['JAVA_HOME'], 'bin', 'javac')
      : 'javac';
    const result = spawnSync(javac, ['-cp', classpath, '-d', scratch, producerSource], {
      encoding: 'utf8',
    });
    if (result.error || result.status !== 0) {
      rmSync(scratch, { recursive: true, force: true });
      throw new Error(
        `could not compile RawProducer.java with ${javac} (a JDK is needed): ${result.error?.message ?? result.stderr}`,
      );
    }
    try {
      renameSync(scratch, target);
    } catch {
      // Another process put its copy there first: the same source, the same class.
      rmSync(scratch, { recursive: true, force: true });
    }
  }
  compiled = target;
  return target;
}

export interface RawProducer {
  /** Sends the messages one by one, each acknowledged before the next; where each landed. */
  produce(messages: readonly RawMessage[]): Promise<Landed[]>;
  /** Ends the producer's input and waits for the JVM to exit. */
  close(): Promise<void>;
}

/** RawProducer's JVM, and what it said so far: one acknowledgement line per message produced. */
class ProducerJvm {
  readonly child: ChildProcessByStdio<Writable, Readable, Readable>;
  /** `partition\toffset` of each message acknowledged so far, in order. */
  readonly acks: string[] = [];
  stderr = '';
  /** Undefined while the JVM runs; null when it could not start. */
  exitCode: number | null | undefined;
  /** Wakes the batch waiting for acknowledgements (more came, or the JVM exited). */
  waiter: (() => void) | undefined;
  /** Settles once the JVM exited or could not start. */
  readonly exited: Promise<void>;
  #buffered = '';

  constructor(brokers: readonly string[]) {
    const classpath = resolveKafkaClasspath();
    const classes = compiledProducer(classpath);
    this.child = spawn(
      findJava(),
      [
        ...shortLivedJvm,
        '-cp',
        `${classes}${path.delimiter}${classpath}`,
        'RawProducer',
        brokers.join(','),
      ],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    this.child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      this.#buffered += chunk;
      const lines = this.#buffered.split('\n');
      this.#buffered = lines.pop() ?? '';
      this.acks.push(...lines.filter((row) => row !== ''));
      this.waiter?.();
    });
    this.child.stderr.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise<void>((resolve) => {
      this.child.once('error', (error) => {
        this.stderr += String(error);
        this.exitCode = null;
        resolve();
      });
      this.child.once('close', (code) => {
        this.exitCode = code;
        resolve();
      });
    }).then(() => this.waiter?.());
    // A producer that died closes its stdin: the exit code and stderr tell why.
    this.child.stdin.on('error', () => undefined);
  }

  /** An error saying what went wrong, with the end of what the JVM wrote to stderr. */
  failure(what: string): Error {
    return new Error(`the Java producer ${what}: ${this.stderr.slice(-2000) || '(no output)'}`);
  }
}

/**
 * Kafka's own Java client (RawProducer.java on the broker's classpath), producing messages
 * byte for byte, so the corpus does not come from the JavaScript client the services consume
 * with. Kafka's default partitioner. One JVM serves every batch: start it before it is needed.
 */
export function openRawProducer(brokers: readonly string[]): RawProducer {
  const jvm = new ProducerJvm(brokers);
  const { child, acks } = jvm;

  return {
    async produce(messages) {
      if (jvm.exitCode !== undefined) throw jvm.failure(`had exited ${String(jvm.exitCode)}`);
      const from = acks.length;
      child.stdin.write(messages.map((message) => `${line(message)}\n`).join(''));
      const deadline = Date.now() + batchDeadlineMs;
      while (acks.length < from + messages.length) {
        if (jvm.exitCode !== undefined) {
          throw jvm.failure(
            `exited ${String(jvm.exitCode)} after ${acks.length - from} of ${messages.length} messages`,
          );
        }
        const left = deadline - Date.now();
        if (left <= 0) {
          child.kill('SIGKILL');
          throw jvm.failure(
            `acknowledged ${acks.length - from} of ${messages.length} messages in ${batchDeadlineMs} ms`,
          );
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          jvm.waiter = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        jvm.waiter = undefined;
      }
      return acks.slice(from, from + messages.length).map((row, n) => {
        const [partition = '', offset = ''] = row.split('\t');
        return { topic: messages[n]?.topic ?? '', partition: Number(partition), offset };
      });
    },
    async close() {
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), batchDeadlineMs);
      await jvm.exited.finally(() => clearTimeout(timer));
      if (jvm.exitCode !== 0) throw jvm.failure(`exited ${String(jvm.exitCode)} on close`);
    },
  };
}

/** One batch through a producer of its own: where each message landed, in order. */
export async function produceRaw(
  brokers: readonly string[],
  messages: readonly RawMessage[],
): Promise<Landed[]> {
  const producer = openRawProducer(brokers);
  let landed: Landed[];
  try {
    landed = await producer.produce(messages);
  } catch (error) {
    await producer.close().catch(() => undefined);
    throw error;
  }
  await producer.close();
  return landed;
}
