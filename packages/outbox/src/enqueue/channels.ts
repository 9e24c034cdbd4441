/** NOTIFY channel `enqueue` signals at commit; relays LISTEN on it. */
export const OUTBOX_CHANNEL = 'outbox_event';
/** NOTIFY channel the inbox writer signals at commit; processors LISTEN on it. */
export const INBOX_CHANNEL = 'inbox_event';
