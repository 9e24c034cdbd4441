import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { roleListings, withRegion } from './role-listings.ts';
import { services } from './services.ts';

const root = path.resolve(import.meta.dirname, '../../../..');

describe.each(roleListings.map((listing) => [listing.file, listing] as const))(
  '%s',
  (_file, listing) => {
    it('lists the roles as the service descriptors declare them (./pnpm sync-roles rewrites it)', () => {
      const text = readFileSync(path.join(root, listing.file), 'utf8');
      expect(text).toBe(withRegion(text, listing, listing.render(services)));
    });
  },
);

describe('withRegion', () => {
  const [listing] = roleListings;
  if (listing === undefined) throw new Error('no listing');

  it('replaces only what stands between the markers', () => {
    const text = `before\n${listing.open}\nold\n${listing.close}\nafter\n`;
    expect(withRegion(text, listing, 'new\n')).toBe(
      `before\n${listing.open}\nnew\n${listing.close}\nafter\n`,
    );
  });

  it('names the file and the markers it lacks', () => {
    expect(() => withRegion('no markers\n', listing, '')).toThrow(
      `${listing.file} lacks the lines`,
    );
  });
});
