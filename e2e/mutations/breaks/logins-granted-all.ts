import type { AnchoredEdit } from '../anchored-edits.ts';

export const loginsGrantedAll: readonly AnchoredEdit[] = [
  {
    in: 'grantRoleLogins',
    find: [
      '      await sql`REVOKE ALL ON ALL TABLES IN SCHEMA ${sql.id(schema)} FROM ${sql.id(login)}`.execute(',
    ],
    replace: [
      '      // MUTATION: every login gets every privilege on every table, as a superuser had.',
      '      await sql`GRANT ALL ON ALL TABLES IN SCHEMA ${sql.id(schema)} TO ${sql.id(login)}`.execute(',
    ],
  },
];
