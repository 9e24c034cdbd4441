import { existsSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** Where a Docker engine may listen: a unix socket, or TCP (plain or TLS). */
export type DockerEndpoint =
  | { readonly type: 'unix'; readonly path: string }
  | { readonly type: 'tcp'; readonly host: string; readonly port: number; readonly tls: boolean };

/**
 * DOCKER_HOST when set (unix:// or tcp://; other schemes such as ssh:// are not probed), else
 * the sockets of a system engine, Docker Desktop and rootless Docker that exist on disk.
 */
export function dockerEndpoints(env: NodeJS.ProcessEnv = process.env): DockerEndpoint[] {
  const dockerHost = env['DOCKER_HOST'];
  if (dockerHost) {
    if (dockerHost.startsWith('unix://')) {
      return [{ type: 'unix', path: dockerHost.slice('unix://'.length) }];
    }
    if (dockerHost.startsWith('tcp://')) {
      const url = new URL(dockerHost);
      const tls = Boolean(env['DOCKER_TLS_VERIFY']) || url.port === '2376';
      return [
        { type: 'tcp', host: url.hostname, port: Number(url.port || (tls ? 2376 : 2375)), tls },
      ];
    }
    return [];
  }
  const candidates = [
    '/var/run/docker.sock',
    path.join(env['HOME'] ?? os.homedir(), '.docker', 'run', 'docker.sock'),
    ...(env['XDG_RUNTIME_DIR'] ? [path.join(env['XDG_RUNTIME_DIR'], 'docker.sock')] : []),
  ];
  return candidates
    .filter((file) => existsSync(file))
    .map((file) => ({ type: 'unix', path: file }));
}

/**
 * One `GET /_ping` with a deadline: true when the engine answers 200. A socket file left behind
 * by a stopped engine refuses the connection at once, so the common "no Docker" case is instant.
 * Over TLS a completed TCP connection counts as an answer (no client certificates here).
 */
export async function pingDocker(endpoint: DockerEndpoint, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket =
      endpoint.type === 'unix'
        ? net.connect({ path: endpoint.path })
        : net.connect({ host: endpoint.host, port: endpoint.port });
    let response = '';
    const finish = (answered: boolean): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answered);
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.once('error', () => finish(false));
    socket.once('connect', () => {
      if (endpoint.type === 'tcp' && endpoint.tls) {
        finish(true);
        return;
      }
      socket.write('GET /_ping HTTP/1.1\r\nHost: docker\r\nConnection: close\r\n\r\n');
    });
    socket.on('data', (chunk: Buffer) => {
      response += chunk.toString('latin1');
      if (response.includes('\r\n')) finish(/^HTTP\/1\.[01] 200 /.test(response));
    });
    socket.once('end', () => finish(/^HTTP\/1\.[01] 200 /.test(response)));
  });
}

/** True when some Docker engine answers within `timeoutMs`. */
export async function dockerAnswers(
  env: NodeJS.ProcessEnv = process.env,
  timeoutMs = 1000,
): Promise<boolean> {
  const answers = await Promise.all(
    dockerEndpoints(env).map((endpoint) => pingDocker(endpoint, timeoutMs)),
  );
  return answers.includes(true);
}
