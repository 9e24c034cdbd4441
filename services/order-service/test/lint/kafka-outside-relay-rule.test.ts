import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../../../..');
const eslint = new ESLint({ cwd: repoRoot });

/** Lints a fixture as if it lived at `asPath` (relative to the repo root); returns the rule ids. */
async function ruleIdsAt(fixture: string, asPath: string): Promise<(string | null)[]> {
  const code = readFileSync(path.join(here, 'fixtures', fixture), 'utf8');
  const [result] = await eslint.lintText(code, { filePath: path.join(repoRoot, asPath) });
  return result?.messages.map((message) => message.ruleId) ?? [];
}

describe('lint: Kafka only from relay / infrastructure modules (R-DIST-OBX-X1, X2)', () => {
  it('fires on a write handler that imports kafkajs, creates a producer and sends in its transaction', async () => {
    const ids = await ruleIdsAt(
      'send-in-write-handler.ts',
      'services/order-service/src/orders/create-order.ts',
    );
    expect(ids).toContain('@typescript-eslint/no-restricted-imports');
    expect(ids.filter((id) => id === 'no-restricted-syntax')).toHaveLength(2); // .producer() and .send()
  });

  it('fires on a send in an after-commit callback, whichever service it is in', async () => {
    for (const at of [
      'services/order-service/src/orders/cancel-order.ts',
      'services/payment-service/src/payments/x.ts',
    ]) {
      expect(await ruleIdsAt('send-after-commit.ts', at)).toEqual(['no-restricted-syntax']);
    }
  });

  it('allows the same code in relay and infrastructure modules', async () => {
    expect(
      await ruleIdsAt('send-in-write-handler.ts', 'services/order-service/src/relay/naive.ts'),
    ).toEqual([]);
    expect(
      await ruleIdsAt('send-after-commit.ts', 'services/payment-service/src/infrastructure/x.ts'),
    ).toEqual([]);
  });
});
