/** A topic's settings as the `{ name, value }` entries both clients' create and alter requests take. */
export function configEntries(
  configs: Readonly<Record<string, string>> = {},
): { name: string; value: string }[] {
  return Object.entries(configs).map(([name, value]) => ({ name, value }));
}
