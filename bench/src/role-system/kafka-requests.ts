/** Requests by Kafka API, as one role process's `kafka_requests_total{api}` counts them. */
export type RequestCounts = ReadonlyMap<string, number>;

const SAMPLE = /^kafka_requests_total\{api="([^"]+)"\}\s+(\S+)$/;

/** Reads a role process's `/metrics` (its counters since it started). */
export async function readKafkaRequests(roleUrl: string): Promise<RequestCounts> {
  const response = await fetch(`${roleUrl}/metrics`);
  const counts = new Map<string, number>();
  for (const line of (await response.text()).split('\n')) {
    const match = SAMPLE.exec(line);
    if (match?.[1] !== undefined) counts.set(match[1], Number(match[2]));
  }
  return counts;
}

/** What each API's counter grew by between two readings. */
export function requestsSince(before: RequestCounts, after: RequestCounts): RequestCounts {
  return new Map([...after].map(([api, count]) => [api, count - (before.get(api) ?? 0)] as const));
}
