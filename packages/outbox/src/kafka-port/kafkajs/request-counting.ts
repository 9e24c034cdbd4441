/** What a kafkajs producer, consumer and admin have in common: the REQUEST event. */
export interface RequestEmitter {
  readonly events: { readonly REQUEST: string };
  on(event: string, listener: (event: { payload: { apiName: string } }) => void): unknown;
}

/** Subscribes `onRequest` to an instance's requests (nothing without it). */
export type CountRequests = (instance: RequestEmitter) => void;

export function countRequests(onRequest: ((apiName: string) => void) | undefined): CountRequests {
  return (instance) => {
    if (onRequest === undefined) return;
    instance.on(instance.events.REQUEST, (event) => onRequest(event.payload.apiName));
  };
}
