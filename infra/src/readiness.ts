import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { isListening } from './ports.ts';
import type { Readiness } from './state-file.ts';

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
        return cluster.brokers.length > 0 && cluster.controller !== null;
      } finally {
        await admin.disconnect().catch(() => undefined);
      }
    }
  }
}
