/**
 * How many `POST /orders` the api answered, and how many took longer than a bound of its request
 * histogram (`le` of a bucket, seconds: 1 or 2.5), by its own clock.
 */
export async function apiAnswerTimes(
  apiUrl: string,
): Promise<{ answered: number; over(seconds: number): number }> {
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
  return { answered, over: (seconds) => answered - within(seconds) };
}
