import net from 'node:net';

export interface BrokerSilence {
  /** While on, every write to a broker's port is swallowed: the broker never sees the request. */
  silence(on: boolean): void;
  /** Puts net.Socket back as it was. */
  restore(): void;
}

/**
 * Makes Kafka go silent for this process, whatever client talks to it: every Kafka client in
 * Node writes through net.Socket, and neither @platformatic/kafka nor the port has a socket hook.
 * Unlike a killed broker, which may have appended a batch before it died, a request written while
 * silent never reaches Kafka, not even later: its bytes are gone, so nothing answers it. Only
 * sockets whose remote port is a broker's are touched (PostgreSQL's stay as they are). Each
 * client writes one whole request per call, so the frames that do pass stay intact.
 */
export function silenceableBrokers(brokers: readonly string[]): BrokerSilence {
  const brokerPorts = new Set(
    brokers.map((broker) => Number(broker.slice(broker.lastIndexOf(':') + 1))),
  );
  const original = net.Socket.prototype.write;
  let silent = false;
  function write(this: net.Socket, ...args: unknown[]): boolean {
    if (!silent || !brokerPorts.has(this.remotePort ?? -1)) {
      return (original as (...a: unknown[]) => boolean).apply(this, args);
    }
    // Swallowed, but a caller that waits for its write callback must not hang on it.
    const callback = args.findLast((arg) => typeof arg === 'function') as (() => void) | undefined;
    if (callback) queueMicrotask(callback);
    return true;
  }
  net.Socket.prototype.write = write as typeof original;
  return {
    silence: (on) => (silent = on),
    restore: () => {
      net.Socket.prototype.write = original;
    },
  };
}
