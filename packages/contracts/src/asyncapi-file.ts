/** Where the generated AsyncAPI document is kept, so readers and tools find it without running code. */
export const asyncApiFile = new URL('../asyncapi.json', import.meta.url).pathname;

export function asyncApiText(document: unknown): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}
