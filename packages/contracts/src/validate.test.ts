import { describe, expect, it } from 'vitest';
import { isEvent, validate } from './validate.ts';

const orderId = '0190a6b2-7c3e-7a51-9d2f-3b1c4e5f6a7b';
const created = {
  schemaVersion: 1,
  orderId,
  customerId: 'c-1',
  amount: 1250,
  currency: 'EUR',
  createdAt: '2025-01-01T10:00:00.000Z',
};

describe('validate', () => {
  it('accepts a valid payload and extra fields (tolerant reader)', () => {
    expect(validate('OrderCreated', created)).toBeUndefined();
    expect(validate('OrderCreated', { ...created, note: 'added later' })).toBeUndefined();
    expect(isEvent('OrderCreated', created)).toBe(true);
  });

  it('names the field and the reason', () => {
    expect(validate('OrderCreated', { ...created, amount: 12.5 })).toMatch(
      /^OrderCreated\/amount: /,
    );
    expect(validate('OrderCreated', { ...created, currency: 'eur' })).toMatch(/\/currency/);
    const missing: Record<string, unknown> = { ...created };
    delete missing['customerId'];
    expect(validate('OrderCreated', missing)).toMatch(/customerId/);
  });

  it('rejects an unknown schema version and an unknown event type', () => {
    expect(validate('OrderCreated', { ...created, schemaVersion: 2 })).toMatch(/schemaVersion/);
    expect(validate('OrderShipped', created)).toBe('unknown event type "OrderShipped"');
    expect(validate('toString', created)).toBe('unknown event type "toString"');
  });

  it('rejects garbage', () => {
    expect(validate('PaymentCompleted', 'not an object')).toMatch(/^PaymentCompleted\//);
    expect(validate('PaymentRefunded', null)).toBeDefined();
    expect(isEvent('PaymentFailed', { orderId })).toBe(false);
  });
});
