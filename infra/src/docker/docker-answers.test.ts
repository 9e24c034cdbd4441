import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { dockerAnswers, dockerEndpoints, pingDocker } from './docker-answers.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** A unix socket in a fresh folder, served by `server`: a stand-in for the engine's socket. */
async function serveOnSocket(server: net.Server): Promise<string> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'docker-answers-'));
  const socketPath = path.join(dir, 'docker.sock');
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  cleanups.push(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return socketPath;
}

function engine(status: number): http.Server {
  return http.createServer((request, response) => {
    response.writeHead(request.url === '/_ping' ? status : 404).end('OK');
  });
}

describe('dockerEndpoints', () => {
  it('reads a unix DOCKER_HOST', () => {
    expect(dockerEndpoints({ DOCKER_HOST: 'unix:///run/user/1000/docker.sock' })).toEqual([
      { type: 'unix', path: '/run/user/1000/docker.sock' },
    ]);
  });

  it('reads a tcp DOCKER_HOST, with TLS on 2376 or DOCKER_TLS_VERIFY', () => {
    expect(dockerEndpoints({ DOCKER_HOST: 'tcp://docker:2375' })).toEqual([
      { type: 'tcp', host: 'docker', port: 2375, tls: false },
    ]);
    expect(dockerEndpoints({ DOCKER_HOST: 'tcp://docker:2376' })).toEqual([
      { type: 'tcp', host: 'docker', port: 2376, tls: true },
    ]);
    expect(dockerEndpoints({ DOCKER_HOST: 'tcp://10.0.0.5:3000', DOCKER_TLS_VERIFY: '1' })).toEqual(
      [{ type: 'tcp', host: '10.0.0.5', port: 3000, tls: true }],
    );
  });

  it('does not guess for schemes it cannot probe', () => {
    expect(dockerEndpoints({ DOCKER_HOST: 'ssh://me@builder' })).toEqual([]);
  });

  it('without DOCKER_HOST, lists only sockets that exist', () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'docker-home-'));
    cleanups.push(() => rmSync(home, { recursive: true, force: true }));
    const endpoints = dockerEndpoints({ HOME: home, XDG_RUNTIME_DIR: home });
    expect(endpoints.every((endpoint) => endpoint.type === 'unix')).toBe(true);
    expect(endpoints.some((endpoint) => 'path' in endpoint && endpoint.path.startsWith(home))).toBe(
      false,
    );
  });
});

describe('dockerAnswers', () => {
  it('is true when the engine answers /_ping with 200', async () => {
    const socketPath = await serveOnSocket(engine(200));
    expect(await dockerAnswers({ DOCKER_HOST: `unix://${socketPath}` }, 2000)).toBe(true);
  });

  it('is false when the engine answers with an error', async () => {
    const socketPath = await serveOnSocket(engine(500));
    expect(await dockerAnswers({ DOCKER_HOST: `unix://${socketPath}` }, 2000)).toBe(false);
  });

  it('is false when nothing listens on the socket', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'docker-none-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    expect(await dockerAnswers({ DOCKER_HOST: `unix://${dir}/docker.sock` }, 2000)).toBe(false);
  });

  it('gives up at the deadline when the socket accepts but never answers', async () => {
    const silent = net.createServer((socket) => cleanups.push(() => socket.destroy()));
    const socketPath = await serveOnSocket(silent);
    expect(await pingDocker({ type: 'unix', path: socketPath }, 200)).toBe(false);
  });

  it('is false when no endpoint is known', async () => {
    expect(await dockerAnswers({ DOCKER_HOST: 'ssh://me@builder' }, 200)).toBe(false);
  });
});
