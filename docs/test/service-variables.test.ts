import { readFileSync } from 'node:fs';
import path from 'node:path';
import { services } from '@outbox-inbox/launcher';
import { describe, expect, it } from 'vitest';

describe("each service's README", () => {
  it.each(services.map((service) => [service.name, service]))(
    '%s names every variable its configuration reads',
    (_name, service) => {
      const readme = readFileSync(path.join(service.directory, 'README.md'), 'utf8');
      const missing = service.env
        .map((v) => v.name)
        .filter((name) => !readme.includes(`\`${name}\``));
      expect(missing).toEqual([]);
    },
  );
});
