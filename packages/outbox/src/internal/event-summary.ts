/** The columns that name an event and where it goes, alike in outbox_event and inbox_event. */
export interface EventSummaryColumns {
  readonly event_id: string;
  readonly event_type: string;
  readonly topic: string;
  readonly partition_key: string;
}

/** An event's id, type, topic and partition key: what names it to a hook or an operator. */
export interface EventSummary {
  readonly eventId: string;
  readonly eventType: string;
  readonly topic: string;
  readonly partitionKey: string;
}

export function eventSummaryOf(row: EventSummaryColumns): EventSummary {
  return {
    eventId: row.event_id,
    eventType: row.event_type,
    topic: row.topic,
    partitionKey: row.partition_key,
  };
}
