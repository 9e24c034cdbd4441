#!/usr/bin/env node
/**
 * `./pnpm sync-roles`: rewrites the regions of the files that list every role (see
 * role-listings.ts) from the service descriptors, after a role is declared or changed.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { roleListings, withRegion } from './system/role-listings.ts';
import { services } from './system/services.ts';

const root = path.resolve(import.meta.dirname, '../../..');
for (const listing of roleListings) {
  const file = path.join(root, listing.file);
  const before = readFileSync(file, 'utf8');
  const after = withRegion(before, listing, listing.render(services));
  if (after === before) continue;
  writeFileSync(file, after);
  console.log(`rewrote the roles of ${listing.file}`);
}
