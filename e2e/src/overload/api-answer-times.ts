/**
 * How many `POST /orders` the api answered, how many took longer than a bound of its request
 * histogram (`le` of a bucket, seconds: 1 or 2.5), by its own clock, and how many it refused for
 * each reason.
 */
export async function apiAnswerTimes(apiUrl: string): Promise<{
  answered: number;
  over(seconds: number): number;
  refused(reason: string): number;
}> {
  const text = await (await fetch(`${apiUrl}/metrics`)).text();
  const value = (pattern: RegExp): number => Number(pattern.exec(text)?.[1] ?? Number.NaN);
  const answered = value(
    /http_request_duration_seconds_count\{[^}]*method="POST",route="\/orders"[^}]*\} (\d+)/,
  );
  const within = (seconds: number): number =>
    value(
      new RegExp(
        String.raw`http_request_duration_seconds_bucket\{(?=[^}]*le="${seconds}")(?=[^}]*method="POST")(?=[^}]*route="/orders")[^}]*\} (\d+)`,
      ),
    );
  const refused = (reason: string): number =>
    value(new RegExp(String.raw`http_requests_refused_total\{reason="${reason}"\} (\d+)`)) || 0;
  return { answered, over: (seconds) => answered - within(seconds), refused };
}
