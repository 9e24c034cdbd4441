import type { AnchoredEdit } from '../anchored-edits.ts';

export const retentionSessionLock: readonly AnchoredEdit[] = [
  {
    in: 'runRetentionExclusively',
    scope: 'module',
    find: [
      "import type { Kysely } from 'kysely';",
      "import type { OutboxTables } from '../schema/tables.ts';",
      "import { runRetentionLocked, type RetentionOptions, type RetentionResult } from './retention.ts';",
    ],
    replace: [
      "import { sql, type Kysely } from 'kysely';",
      "import { outboxDb } from '../internal/views.ts';",
      "import type { OutboxTables } from '../schema/tables.ts';",
      'import {',
      '  runRetention,',
      '  runRetentionLocked,',
      '  type RetentionOptions,',
      '  type RetentionResult,',
      "} from './retention.ts';",
    ],
  },
  {
    in: 'runRetentionExclusively',
    find: ['  return runRetentionLocked(db, options, RETENTION_LOCK_ID);'],
    replace: [
      '  // MUTATION: a session lock, taken and released by two statements on one pooled connection.',
      '  return outboxDb(db)',
      '    .connection()',
      '    .execute(async (connection) => {',
      '      const locked = await sql<{ locked: boolean }>`',
      '        SELECT pg_try_advisory_lock(${RETENTION_LOCK_ID}) AS locked',
      '      `.execute(connection);',
      '      if (locked.rows[0]?.locked !== true) return undefined;',
      '      try {',
      '        return await runRetention(connection, options);',
      '      } finally {',
      '        await sql`SELECT pg_advisory_unlock(${RETENTION_LOCK_ID})`.execute(connection);',
      '      }',
      '    });',
    ],
  },
];
