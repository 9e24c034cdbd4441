import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { isListening } from './ports.ts';

/** How to tell that a component is ready to serve. */
export type Readiness =
  | { readonly type: 'postgres'; readonly url: string }
  | {
      readonly type: 'kafka';
      readonly brokers: readonly string[];
      /** A cluster node: ready once the cluster lists this node id among its live brokers. */
      readonly nodeId?: number;
    }
  | { readonly type: 'http'; readonly url: string }
  | { readonly type: 'tcp'; readonly port: number };

/** One probe, no retries: the caller polls it with a deadline. */
export async function isReady(readiness: Readiness): Promise<boolean> {
  switch (readiness.type) {
    case 'tcp':
      return isListening(readiness.port);
    case 'http': {
      const response = await fetch(readiness.url, { signal: AbortSignal.timeout(2000) });
      return response.ok;
    }
    case 'postgres': {
      const client = new pg.Client({
        connectionString: readiness.url,
        connectionTimeoutMillis: 2000,
      });
      client.on('error', () => undefined);
      try {
        await client.connect();
        await client.query('SELECT 1');
        return true;
      } finally {
        await client.end().catch(() => undefined);
      }
    }
    case 'kafka': {
      const admin = new Kafka({
        clientId: 'stack-readiness',
        brokers: [...readiness.brokers],
        logLevel: logLevel.NOTHING,
        connectionTimeout: 2000,
        retry: { retries: 0 },
      }).admin();
      try {
        await admin.connect();
        const cluster = await admin.describeCluster();
        if (readiness.nodeId !== undefined) {
          return cluster.brokers.some((broker) => broker.nodeId === readiness.nodeId);
        }
        return cluster.brokers.length > 0 && cluster.controller !== null;
      } finally {
        await admin.disconnect().catch(() => undefined);
      }
    }
  }
}
