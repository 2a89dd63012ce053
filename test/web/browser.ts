/**
 * Headless Chromium for the page tests: the system's `chromium` (Debian package) driven by
 * playwright-core, which downloads nothing. CHROMIUM_PATH overrides the binary.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import type { BrowserContext } from 'playwright-core';

import { CHROMIUM_PATH } from './chromium.ts';

export { CHROMIUM_PATH, HAS_CHROMIUM, NO_CHROMIUM_MESSAGE } from './chromium.ts';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // Belt and braces: the browser may talk to this machine's loopback only, never resolve a host.
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost',
];

export interface TestBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A browser with a fresh profile directory, removed on close. */
export async function launchBrowser(viewport = { width: 1280, height: 900 }): Promise<TestBrowser> {
  const profile = await mkdtemp(join(tmpdir(), 'textdetect-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ARGS,
    viewport,
    deviceScaleFactor: 1,
    timeout: 60_000,
  });
  return {
    context,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
