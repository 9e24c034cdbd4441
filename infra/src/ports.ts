import {
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  unlinkSync,
} from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { InfraError } from './errors.ts';

/**
 * A port handed out stays reserved this long (across processes on this machine), so that two
 * callers that pick before either binds never get the same one: Kafka's two listeners, two
 * stacks started side by side by parallel test files. Binding takes seconds; once bound, the
 * free-port probe sees it.
 */
const reservationMs = 10 * 60_000;

/**
 * Picks a free loopback port BELOW the kernel's ephemeral range. A port the kernel hands out
 * for `listen(0)` comes from the same range as the source ports of outgoing connections, so
 * on a busy machine a client socket can take it before the server binds it. Ports below the
 * range are only ever taken by servers.
 */
export async function findFreePort(
  options: { readonly random?: () => number; readonly reservations?: string } = {},
): Promise<number> {
  const random = options.random ?? Math.random;
  const reservations = options.reservations ?? defaultReservations();
  const [ephemeralStart] = ephemeralRange();
  const low = 20_000;
  const high = Math.max(low + 1000, ephemeralStart - 1);
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = low + Math.floor(random() * (high - low));
    if (!reserve(reservations, port)) continue;
    if (await isPortFree(port)) return port;
  }
  throw new InfraError('PORT_TAKEN', `no free port found between ${low} and ${high}`);
}

function defaultReservations(): string {
  return path.join(os.tmpdir(), 'outbox-inbox-ports');
}

/** Creates the port's reservation file; false when a live reservation holds it already. */
function reserve(dir: string, port: number): boolean {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, String(port));
  try {
    if (Date.now() - statSync(file).mtimeMs < reservationMs) return false;
    unlinkSync(file);
  } catch {
    // No reservation yet (or another process just removed the expired one).
  }
  try {
    closeSync(openSync(file, 'wx'));
  } catch {
    return false;
  }
  dropExpired(dir);
  return true;
}

function dropExpired(dir: string): void {
  for (const name of readdirSync(dir)) {
    try {
      const file = path.join(dir, name);
      if (Date.now() - statSync(file).mtimeMs >= reservationMs) unlinkSync(file);
    } catch {
      // Gone already.
    }
  }
}

function ephemeralRange(): [number, number] {
  try {
    const [start, end] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    if (start !== undefined && end !== undefined && start > 0) return [start, end];
  } catch {
    // Not Linux: use the IANA dynamic range's start.
  }
  return [49_152, 65_535];
}

export async function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

export async function assertPortFree(port: number, owner: string, envName: string): Promise<void> {
  if (!(await isPortFree(port))) {
    throw new InfraError('PORT_TAKEN', `port ${port} for ${owner} is taken by another process`, {
      hint: `stop whatever listens on ${port} (\`ss -ltnp 'sport = :${port}'\`) or set ${envName} to another port`,
    });
  }
}

/** True when something accepts TCP connections on the port. */
export async function isListening(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    socket.setTimeout(1000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}
