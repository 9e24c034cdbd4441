import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { roleProcesses } from './role-processes.ts';
import { devServicePorts } from './service-components.ts';

// infra/observability/prometheus.yml scrapes the `pnpm dev` stack at fixed ports. It lives in
// infra, which knows no service, so the check that it follows the services' descriptors lives
// here: a role added to a descriptor without a scrape target fails this test.

interface StaticConfig {
  readonly targets: string[];
  readonly labels?: Record<string, string>;
}

const root = path.resolve(import.meta.dirname, '../../../..');
const config = parse(
  readFileSync(path.join(root, 'infra/observability/prometheus.yml'), 'utf8'),
) as { scrape_configs: { job_name: string; static_configs?: StaticConfig[] }[] };

/** Every scraped address with the labels the alert rules aggregate by. */
function scrapedTargets(): { target: string; service?: string; role?: string }[] {
  return config.scrape_configs.flatMap((job) =>
    (job.static_configs ?? []).flatMap((group) =>
      group.targets.map((target) => ({
        target,
        service: group.labels?.['service'],
        role: group.labels?.['role'],
      })),
    ),
  );
}

describe('the Prometheus scrape config (infra/observability/prometheus.yml)', () => {
  it('scrapes every role process of the dev stack on its port, labelled with its service and role, and nothing else', () => {
    const ports = devServicePorts({});
    const expected = roleProcesses().map(({ name, service, role }) => ({
      target: `127.0.0.1:${ports[name]}`,
      service: service.name,
      role,
    }));
    const byTarget = (a: { target: string }, b: { target: string }) =>
      a.target.localeCompare(b.target);
    expect(scrapedTargets().sort(byTarget)).toEqual(expected.sort(byTarget));
  });
});
