import { randomUUID } from 'node:crypto';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { createPgPool, silentLogger } from '../../src/index.ts';
import { stack } from '../support/harness.ts';

const opened: Kysely<unknown>[] = [];

/** A pool of one connection, so every statement and every look at the cache share a session. */
async function oneConnection(prepareStatements?: boolean): Promise<Kysely<unknown>> {
  const url = await stack().createDatabase(`prepared_${randomUUID().slice(0, 8)}`);
  const pool = createPgPool({ connectionString: url, max: 1 }, silentLogger, {
    prepareStatements,
  });
  const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) });
  opened.push(db);
  return db;
}

async function preparedOnThisConnection(db: Kysely<unknown>) {
  const { rows } = await sql<{
    statement: string;
    executions: number;
  }>`SELECT statement, (generic_plans + custom_plans)::int AS executions
       FROM pg_prepared_statements WHERE NOT from_sql`.execute(db);
  return rows;
}

const addOne = (db: Kysely<unknown>, n: number) =>
  sql<{ next: number }>`SELECT ${n}::int + 1 AS next`.execute(db);

afterEach(async () => {
  await Promise.all(opened.splice(0).map((db) => db.destroy()));
});

describe('prepared statements', () => {
  it('prepares a parameterised text on its fifth execution and reuses it', async () => {
    const db = await oneConnection();
    for (let n = 1; n <= 4; n++) expect((await addOne(db, n)).rows).toEqual([{ next: n + 1 }]);
    expect(await preparedOnThisConnection(db)).toEqual([]);

    for (let n = 5; n <= 9; n++) expect((await addOne(db, n)).rows).toEqual([{ next: n + 1 }]);
    expect(await preparedOnThisConnection(db)).toEqual([
      { statement: 'SELECT $1::int + 1 AS next', executions: 5 },
    ]);
  });

  it('prepares nothing when turned off', async () => {
    const db = await oneConnection(false);
    for (let n = 1; n <= 8; n++) await addOne(db, n);
    expect(await preparedOnThisConnection(db)).toEqual([]);
  });

  it('fails once after a migration changes what the statement returns, then prepares it anew', async () => {
    const db = await oneConnection();
    await sql`CREATE TABLE account (id int PRIMARY KEY)`.execute(db);
    await sql`INSERT INTO account VALUES (1)`.execute(db);
    const readAccount = () => sql`SELECT * FROM account WHERE id = ${1}`.execute(db);
    for (let n = 1; n <= 6; n++) expect((await readAccount()).rows).toEqual([{ id: 1 }]);

    await sql`ALTER TABLE account ADD COLUMN owner text`.execute(db);

    await expect(readAccount()).rejects.toMatchObject({ code: '0A000' });
    expect((await readAccount()).rows).toEqual([{ id: 1, owner: null }]);
    for (let n = 1; n <= 5; n++) await readAccount();
    const prepared = await preparedOnThisConnection(db);
    expect(prepared.map((row) => row.statement)).toEqual([
      'SELECT * FROM account WHERE id = $1',
      'SELECT * FROM account WHERE id = $1',
    ]);
  });
});
