import type { EventProducer, KafkaClient, ProducerOptions } from '../kafka-port/kafka-client.ts';

/** A relay lane's producer: created and connected when first needed, dropped after a failure. */
export class LaneProducer {
  readonly #kafka: KafkaClient;
  readonly #options: ProducerOptions;
  #producer: EventProducer | undefined;

  constructor(kafka: KafkaClient, options: ProducerOptions) {
    this.#kafka = kafka;
    this.#options = options;
  }

  async connected(): Promise<EventProducer> {
    if (this.#producer) return this.#producer;
    const created = this.#kafka.createProducer(this.#options);
    try {
      await created.connect();
    } catch (error) {
      await created.disconnect().catch(() => undefined);
      throw error;
    }
    this.#producer = created;
    return created;
  }

  /**
   * After a failed send the producer may be mid-retry or fenced; a fresh one (new producer id)
   * is the simple known state. Not after refusals Kafka answered: see EventProducer.send.
   */
  async drop(): Promise<void> {
    const old = this.#producer;
    this.#producer = undefined;
    await old?.disconnect().catch(() => undefined);
  }
}
