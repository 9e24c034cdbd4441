/**
 * Text PostgreSQL can store: U+0000 becomes the visible escape `\u0000` and a lone UTF-16
 * surrogate becomes U+FFFD. For text the library writes about a message (a parking reason,
 * which may quote the message), so that writing it can never fail on the message's content.
 */
export function storableText(text: string): string {
  return text.replaceAll('\u0000', '\\u0000').toWellFormed();
}
