import { randomUUID } from 'node:crypto';
import { sql, type Generated, type Kysely } from 'kysely';
import { enqueue, migrateOutbox, type OutboxTables } from '@outbox-inbox/outbox';

export const signupTopic = 'signup.events';

/** The service's one table. `welcomes` counts the consumer's effects: a repeat would show. */
export interface SignupsTable {
  id: string;
  email: string;
  created_at: Generated<Date>;
  welcomes: Generated<number>;
}

/** The service's tables and the library's (outbox_event, processed_event, …) in one database. */
export interface Db extends OutboxTables {
  signups: SignupsTable;
}

export async function migrate(db: Kysely<Db>): Promise<void> {
  await migrateOutbox(db);
  await sql`
    CREATE TABLE IF NOT EXISTS signups (
      id uuid PRIMARY KEY,
      email text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      welcomes integer NOT NULL DEFAULT 0
    )
  `.execute(db);
}

/** The write: the signup row and its event commit together, or neither does. */
export async function signUp(db: Kysely<Db>, email: string): Promise<string> {
  const id = randomUUID();
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('signups').values({ id, email }).execute();
    await enqueue(trx, {
      eventType: 'UserSignedUp',
      aggregateType: 'signup',
      aggregateId: id,
      topic: signupTopic,
      partitionKey: id,
      payload: { id, email },
    });
  });
  return id;
}

/** The consumer's effect, in the transaction that records the event as processed. */
export async function welcome(trx: Kysely<Db>, signupId: string): Promise<void> {
  await trx
    .updateTable('signups')
    .set((eb) => ({ welcomes: eb('welcomes', '+', 1) }))
    .where('id', '=', signupId)
    .execute();
}
