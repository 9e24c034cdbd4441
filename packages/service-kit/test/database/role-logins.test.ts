import { randomUUID } from 'node:crypto';
import { Stack, probeAsLogin } from '@outbox-inbox/infra';
import type {} from '@outbox-inbox/infra/vitest-global-setup';
import { migrateOutbox } from '@outbox-inbox/outbox';
import { pino } from 'pino';
import { expect, inject, it } from 'vitest';
import { grantRoleLogins } from '../../src/database/role-logins.ts';
import { withOneConnection } from '../../src/database/with-one-connection.ts';

const logger = pino({ level: 'silent' });

/** A fresh database with the outbox tables, and a function that grants logins in it. */
async function outboxDatabase(stack: Stack) {
  const url = await stack.createDatabase(`logins_${randomUUID().slice(0, 8)}`);
  await withOneConnection({ url, logger }, (db) => migrateOutbox(db));
  const grant = (logins: Parameters<typeof grantRoleLogins>[1]) =>
    withOneConnection({ url, logger }, (db) => grantRoleLogins(db, logins, logger));
  return { url, grant };
}

it('two databases migrated at once both create and grant the same new login', async () => {
  const stack = Stack.open(inject('stackName'));
  // A name no other test uses, starting with `-` as an option would: it is quoted throughout.
  const login = `-relay-${randomUUID().slice(0, 8)}`;
  const [a, b] = await Promise.all([outboxDatabase(stack), outboxDatabase(stack)]);
  const access = { outbox: ['relay' as const] };
  // Both sessions may find the login missing and create it: the one that loses the race goes on.
  await Promise.all([a.grant([{ login, access }]), b.grant([{ login, access }])]);
  for (const { url } of [a, b]) {
    expect(await probeAsLogin(url, login, 'SELECT id FROM outbox_event')).toEqual({ done: true });
    expect(await probeAsLogin(url, login, 'DELETE FROM outbox_event')).toMatchObject({
      code: '42501',
    });
  }
});
