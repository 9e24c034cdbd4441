import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/** Debian's Chromium, or CHROMIUM_PATH: the browser the system has, never a download. */
export const chromiumPath = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

/**
 * Headless Chromium with a fresh profile (its own --user-data-dir). Throws, naming the fix, when the browser is missing:
 * a browser test that quietly did not run would read as a pass.
 */
export async function launchChromium(): Promise<{
  context: BrowserContext;
  close(): Promise<void>;
}> {
  if (!existsSync(chromiumPath)) {
    throw new Error(
      `no Chromium at ${chromiumPath}: the dashboard's browser test needs one. ` +
        'Install it with `apt-get install -y chromium` (`.ci/run` does this when it runs as root) ' +
        'or point CHROMIUM_PATH at a Chromium binary.',
    );
  }
  const profile = mkdtempSync(path.join(os.tmpdir(), 'dashboard-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
    viewport: { width: 1280, height: 1400 },
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
