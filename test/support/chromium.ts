import { existsSync } from 'node:fs';
import { chromium, type BrowserContext } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it). */
export const CHROMIUM = '/usr/bin/chromium';

/** Why the browser tests cannot run here, or null when they can. */
export const chromiumMissing = existsSync(CHROMIUM) ? null : `no Chromium at ${CHROMIUM}: apt-get install chromium (.ci/run installs it)`;

/**
 * Headless Chromium with a profile of its own. Without the background-networking flags Chromium
 * keeps trying hosts a closed network refuses, and at every start it looks up Google's.
 */
export function launchChromium(userDataDir: string, viewport: { width: number; height: number }): Promise<BrowserContext> {
  return chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport,
  });
}
