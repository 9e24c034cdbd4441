/**
 * How many `POST /orders` the api answered, how many took longer than a bound of its request
 * histogram (`le` of a bucket, seconds: 1 or 2.5), by its own clock, in all or with one status,
 * and how many it refused for each reason.
 */
export async function apiAnswerTimes(apiUrl: string): Promise<{
  answered: number;
  over(seconds: number, status?: number): number;
  refused(reason: string): number;
}> {
  const text = await (await fetch(`${apiUrl}/metrics`)).text();
  const orders = (line: string, status: number | undefined): boolean =>
    line.includes('method="POST"') &&
    line.includes('route="/orders"') &&
    (status === undefined || line.includes(`status="${status}"`));
  // One series per status: the sum over those asked for.
  const sum = (prefix: string, keep: (line: string) => boolean): number =>
    text
      .split('\n')
      .filter((line) => line.startsWith(prefix) && keep(line))
      .reduce((total, line) => total + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
  const count = (status?: number) =>
    sum('http_request_duration_seconds_count{', (line) => orders(line, status));
  const within = (seconds: number, status?: number) =>
    sum(
      'http_request_duration_seconds_bucket{',
      (line) => orders(line, status) && line.includes(`le="${seconds}"`),
    );
  const refused = (reason: string): number =>
    sum('http_requests_refused_total{', (line) => line.includes(`reason="${reason}"`));
  return {
    answered: count(),
    over: (seconds, status) => count(status) - within(seconds, status),
    refused,
  };
}
