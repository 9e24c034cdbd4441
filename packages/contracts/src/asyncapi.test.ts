import { readFileSync } from 'node:fs';
import { EVENT_HEADERS } from '@outbox-inbox/outbox/kafka-port';
import { describe, expect, it } from 'vitest';
import { asyncApiDocument, eventHeaders, topicEventTypes } from './asyncapi.ts';
import { asyncApiFile } from './asyncapi-file.ts';
import { eventSchemas } from './events.ts';
import { topicDeclarations } from './topics.ts';

const document = asyncApiDocument();
const json = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

describe('the AsyncAPI document', () => {
  it('is the committed asyncapi.json (regenerate: pnpm --filter @outbox-inbox/contracts asyncapi)', () => {
    // Compared as data: the file may be formatted by prettier.
    expect(JSON.parse(readFileSync(asyncApiFile, 'utf8'))).toEqual(json(document));
  });

  it('has one channel per declared topic, with its partitions, and a send and a receive operation', () => {
    const channels = Object.values(document.channels);
    expect(channels.map((c) => c.address).sort()).toEqual(
      topicDeclarations.map((t) => t.name).sort(),
    );
    for (const topic of topicDeclarations) {
      const channel = channels.find((c) => c.address === topic.name);
      expect(channel?.bindings.kafka.partitions).toBe(topic.partitions);
      expect(Object.keys(channel?.messages ?? {})).toEqual(topicEventTypes[topic.name]);
    }
    const actions = Object.values(document.operations).map((o) => o.action);
    expect(actions.sort()).toEqual(['receive', 'receive', 'send', 'send']);
  });

  it('describes every event type once, with exactly its contract schema as payload', () => {
    const messages = document.components.messages;
    expect(Object.keys(messages).sort()).toEqual(Object.keys(eventSchemas).sort());
    for (const [type, schema] of Object.entries(eventSchemas)) {
      const contract = json(schema) as Record<string, unknown>;
      delete contract['$id'];
      expect(json(messages[type as keyof typeof messages]?.payload)).toEqual(contract);
    }
    const inChannels = Object.values(document.channels).flatMap((c) => Object.keys(c.messages));
    expect(inChannels.sort()).toEqual(Object.keys(eventSchemas).sort());
  });

  it('requires the headers the outbox relay writes on every event', () => {
    expect([...eventHeaders.required].sort()).toEqual(Object.values(EVENT_HEADERS).sort());
  });
});
