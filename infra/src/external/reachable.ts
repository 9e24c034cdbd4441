import { spawnSync } from 'node:child_process';

// Runs in a child Node process: `Stack.status()` is synchronous, a TCP connect is not.
const probe = `
const net = require('node:net');
const targets = JSON.parse(process.argv[1]);
let pending = targets.length;
if (pending === 0) process.exit(1);
for (const { host, port } of targets) {
  const socket = net.connect({ host, port });
  socket.setTimeout(1000);
  socket.once('connect', () => process.exit(0));
  const fail = () => { socket.destroy(); if (--pending === 0) process.exit(1); };
  socket.once('timeout', fail);
  socket.once('error', fail);
}`;

/** True when at least one of the addresses accepts a TCP connection within a second. */
export function someAddressAnswers(targets: readonly { host: string; port: number }[]): boolean {
  const result = spawnSync(process.execPath, ['-e', probe, JSON.stringify(targets)], {
    timeout: 5000,
    stdio: 'ignore',
  });
  return result.status === 0;
}

/** `host:port` or a postgres:// URL, as probe targets. */
export function addressesOf(endpoint: { url: string } | { brokers: readonly string[] }): {
  host: string;
  port: number;
}[] {
  if ('url' in endpoint) {
    const url = new URL(endpoint.url);
    return [{ host: url.hostname, port: Number(url.port || 5432) }];
  }
  return endpoint.brokers.map((broker) => {
    const separator = broker.lastIndexOf(':');
    return { host: broker.slice(0, separator), port: Number(broker.slice(separator + 1)) };
  });
}
