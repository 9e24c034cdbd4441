import { expect, it } from 'vitest';
import { redactUrl } from './redact-url.ts';

it('hides the password of a URL, keeps a URL without one and a broker list, hides an @ it cannot parse', () => {
  expect(redactUrl('postgres://app:s3cret@db.internal:5432/orders?sslmode=verify-full')).toBe(
    'postgres://app:***@db.internal:5432/orders?sslmode=verify-full',
  );
  expect(redactUrl('postgres://postgres@127.0.0.1:5432/postgres')).toBe(
    'postgres://postgres@127.0.0.1:5432/postgres',
  );
  expect(redactUrl('127.0.0.1:9092,127.0.0.1:9093')).toBe('127.0.0.1:9092,127.0.0.1:9093');
  expect(redactUrl('app:s3cret@db.internal:5432')).not.toContain('s3cret');
});
