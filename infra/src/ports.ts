import net from 'node:net';
import { InfraError } from './errors.ts';

/** Asks the kernel for a free loopback port. */
export async function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
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
