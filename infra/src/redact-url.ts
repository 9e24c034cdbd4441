/**
 * A connection string fit to print: its password replaced by `***` (an external provider's
 * DATABASE_URL may carry one). A URL without a password, and text with no `@` (a broker list),
 * are returned as they are; text with an `@` that is not a URL (`user:secret@host`) is hidden.
 */
export function redactUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return hiddenIfAt(value);
  }
  // `user:secret@host` parses as the scheme `user:` with an opaque path: no host, no password.
  if (url.host === '') return hiddenIfAt(value);
  if (url.password === '') return value;
  url.password = '***';
  return url.toString();
}

function hiddenIfAt(value: string): string {
  return value.includes('@')
    ? '(hidden: not a URL with a host, and it may hold a password)'
    : value;
}
