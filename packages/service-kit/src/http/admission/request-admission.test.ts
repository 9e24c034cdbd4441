import { describe, expect, it } from 'vitest';
import { RequestAdmission } from './request-admission.ts';

const present = (): AbortSignal => new AbortController().signal;

describe('RequestAdmission', () => {
  it('admits up to the limit at once, then hands each freed slot to the oldest waiter', async () => {
    const admission = new RequestAdmission({
      maxInFlight: 2,
      maxWaitMs: 10_000,
      retryAfterSeconds: 1,
    });
    const first = await admission.acquire({ waitedMs: 0, gone: present() });
    await admission.acquire({ waitedMs: 0, gone: present() });
    const order: string[] = [];
    const third = admission.acquire({ waitedMs: 0, gone: present() }).then((release) => {
      order.push('third');
      return release;
    });
    const fourth = admission
      .acquire({ waitedMs: 0, gone: present() })
      .then(() => order.push('fourth'));
    expect(admission.waiting).toBe(2);
    first();
    first(); // a second release of the same slot frees nothing
    (await third)();
    await fourth;
    expect(order).toEqual(['third', 'fourth']);
    expect(admission.inFlight).toBe(2);
    expect(admission.waiting).toBe(0);
  });

  it('refuses a request whose wait ran out, counting what it waited before it came', async () => {
    const admission = new RequestAdmission({ maxInFlight: 1, maxWaitMs: 50, retryAfterSeconds: 1 });
    await admission.acquire({ waitedMs: 0, gone: present() });
    await expect(admission.acquire({ waitedMs: 60, gone: present() })).rejects.toBe(
      'wait-exceeded',
    );
    await expect(admission.acquire({ waitedMs: 0, gone: present() })).rejects.toBe('wait-exceeded');
    expect(admission.waiting).toBe(0);
  });

  it('drops a waiter whose client left, and it never takes a slot', async () => {
    const admission = new RequestAdmission({
      maxInFlight: 1,
      maxWaitMs: 10_000,
      retryAfterSeconds: 1,
    });
    const release = await admission.acquire({ waitedMs: 0, gone: present() });
    const client = new AbortController();
    const waiting = admission.acquire({ waitedMs: 0, gone: client.signal });
    client.abort();
    await expect(waiting).rejects.toBe('client-gone');
    release();
    expect(admission.inFlight).toBe(0);
  });

  it('refuses at once a request that finds the queue full, and queues again once it has room', async () => {
    const admission = new RequestAdmission({
      maxInFlight: 1,
      maxWaitMs: 10_000,
      maxWaiting: 1,
      retryAfterSeconds: 1,
    });
    const release = await admission.acquire({ waitedMs: 0, gone: present() });
    const waiting = admission.acquire({ waitedMs: 0, gone: present() });
    await expect(admission.acquire({ waitedMs: 0, gone: present() })).rejects.toBe('queue-full');
    release();
    const next = await waiting;
    const queuedAgain = admission.acquire({ waitedMs: 0, gone: present() });
    expect(admission.waiting).toBe(1);
    next();
    (await queuedAgain)();
    expect(admission.inFlight).toBe(0);
  });

  it('lets as many wait as there are slots when maxWaiting is unset', async () => {
    const admission = new RequestAdmission({
      maxInFlight: 2,
      maxWaitMs: 10_000,
      retryAfterSeconds: 1,
    });
    await admission.acquire({ waitedMs: 0, gone: present() });
    await admission.acquire({ waitedMs: 0, gone: present() });
    void admission.acquire({ waitedMs: 0, gone: present() });
    void admission.acquire({ waitedMs: 0, gone: present() });
    await expect(admission.acquire({ waitedMs: 0, gone: present() })).rejects.toBe('queue-full');
    expect(admission.waiting).toBe(2);
  });
});
