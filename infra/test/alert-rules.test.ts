import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const observability = path.join(import.meta.dirname, '..', 'observability');
/** Debian's `prometheus` package puts it here; PROMTOOL names another. */
const promtool = process.env['PROMTOOL'] ?? '/usr/bin/promtool';

async function promtoolSays(...args: string[]): Promise<string> {
  if (!existsSync(promtool)) {
    throw new Error(
      `no promtool at ${promtool}: the alert rules are checked with it. Install Debian's ` +
        '`prometheus` package (`apt-get install -y prometheus`; `.ci/run` does this as root) ' +
        'or point PROMTOOL at a promtool binary.',
    );
  }
  const { stdout, stderr } = await run(promtool, args, { cwd: observability });
  return stdout + stderr;
}

/** Every PromQL expression of the Grafana dashboard's panels. */
function dashboardQueries(): string[] {
  const dashboard = JSON.parse(
    readFileSync(path.join(observability, 'grafana-dashboard.json'), 'utf8'),
  ) as { panels: { targets: { expr: string }[] }[] };
  return dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr));
}

describe('the alert rules (infra/observability)', () => {
  it('are valid rules, and the scrape config that loads them is a valid config', async () => {
    await expect(promtoolSays('check', 'rules', 'alerts.yml')).resolves.toMatch(
      /SUCCESS: 12 rules found/,
    );
    await expect(promtoolSays('check', 'config', 'prometheus.yml')).resolves.toMatch(/SUCCESS/);
  });

  it('fire, and stay quiet, as their unit tests say (promtool test rules)', async () => {
    // promtool exits non-zero on a failed case, which rejects with its report.
    await expect(promtoolSays('test', 'rules', 'alerts.test.yml')).resolves.toMatch(/SUCCESS/);
  });

  it('and the Grafana dashboard queries the same metrics in valid PromQL', async () => {
    const queries = dashboardQueries();
    expect(queries.length).toBeGreaterThanOrEqual(12);
    // promtool parses expressions only inside rule files: one recording rule per query.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'dashboard-queries-'));
    try {
      const rules = queries.map(
        (expr, i) => `      - record: dashboard:query_${i}\n        expr: ${JSON.stringify(expr)}`,
      );
      const file = path.join(dir, 'queries.yml');
      writeFileSync(file, `groups:\n  - name: dashboard\n    rules:\n${rules.join('\n')}\n`);
      await expect(promtoolSays('check', 'rules', file)).resolves.toMatch(
        new RegExp(`SUCCESS: ${queries.length} rules found`),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
