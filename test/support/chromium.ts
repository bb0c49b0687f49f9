import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/** Debian's chromium, which `.ci/run` installs when it is missing. */
export const chromiumPath = '/usr/bin/chromium';

const inCi = process.env.CI === 'true' || process.env.CI === '1';

/**
 * Whether the browser tests can run: false (they skip) without chromium outside CI; under
 * `CI=true` a missing chromium throws, failing the file instead of skipping it.
 */
export function chromiumAvailable(): boolean {
  const found = existsSync(chromiumPath);
  if (!found && inCi) throw new Error(`CI=true and ${chromiumPath} is missing: .ci/run installs it (apt-get install chromium)`);
  return found;
}

export type HeadlessChromium = { readonly context: BrowserContext; close(): Promise<void> };

/**
 * That chromium headless on a fresh profile of its own (launchPersistentContext is how playwright
 * takes `--user-data-dir`), with nothing running in the background that would reach the network.
 */
export async function launchChromium(): Promise<HeadlessChromium> {
  const profile = await mkdtemp(path.join(os.tmpdir(), 'supply-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    context,
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
