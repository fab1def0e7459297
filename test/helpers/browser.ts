import { readFileSync, mkdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { testApp, type TestApp, type TestUser } from './app';

// The web page in a real browser: Debian's Chromium (installed by .ci/run), driven by puppeteer-core.
// Every step saves a screenshot (SCREENSHOT_DIR, else a temporary folder); every page is checked with
// axe-core, and a serious or critical violation fails the test.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SHOTS = process.env.SCREENSHOT_DIR ?? path.join(os.tmpdir(), 'castsync-screenshots');
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

type Violation = { id: string; impact: string | null; help: string; nodes: { target: string[] }[] };

/** axe-core on the page as it is now: the serious and critical violations. */
async function accessibilityProblems(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  const result = await page.evaluate(() =>
    (globalThis as unknown as { axe: { run: () => Promise<{ violations: Violation[] }> } }).axe.run(),
  );
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** A screenshot of the page, and its accessibility check. */
export async function check(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  expect(await accessibilityProblems(page)).toEqual([]);
}

/**
 * Submits the form of the clicked button; the status of the page it leads to. The button is first scrolled to
 * the middle of the screen, as a person would: at phone width the navigation's bar is fixed at the foot of the
 * screen, and a button in view behind it would give the click to the bar.
 */
export async function submit(page: Page, selector: string): Promise<number> {
  await page.$eval(selector, (e) => e.scrollIntoView({ block: 'center' }));
  const [response] = await Promise.all([page.waitForNavigation(), page.click(selector)]);
  return response!.status();
}

/** The text of each element the selector finds. */
export const text = (page: Page, selector: string) =>
  page.$$eval(selector, (els) => els.map((e) => e.textContent?.trim()));

/**
 * Debian's Chromium, headless (without its sandbox as root, which it refuses otherwise); media may play
 * when a test says so, without a click on the player.
 */
export const launchBrowser = (): Promise<Browser> =>
  puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [...(process.getuid?.() === 0 ? ['--no-sandbox'] : []), '--autoplay-policy=no-user-gesture-required'],
  });

/**
 * An app served on loopback and a browser for a test file: started before its tests, stopped after them.
 * Use its fields inside tests only. `env`: the app's environment, asked for when the app starts.
 */
export function browserWorld(env: () => Record<string, string> = () => ({})) {
  const w = {} as { t: TestApp; origin: string; browser: Browser; server: http.Server };
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    w.t = await testApp(env());
    w.server = http.createServer(w.t.app);
    await new Promise<void>((resolve) => w.server.listen(0, '127.0.0.1', resolve));
    w.origin = `http://127.0.0.1:${(w.server.address() as AddressInfo).port}`;
    w.browser = await launchBrowser();
  });
  afterAll(async () => {
    await w.browser?.close();
    await new Promise((resolve) => w.server?.close(resolve));
    await w.t?.close();
  });
  return {
    get t() {
      return w.t;
    },
    get origin() {
      return w.origin;
    },
    /** A page in a fresh browser context (no cookies), at this size; a dialog fails the test. */
    async newPage(width = 1280, height = 800): Promise<Page> {
      const page = await (await w.browser.createBrowserContext()).newPage();
      await page.setViewport({ width, height });
      page.on('dialog', (d) => {
        throw new Error(`the page opened a dialog: ${d.message()}`);
      });
      return page;
    },
    async signIn(page: Page, u: TestUser, then = '/'): Promise<number> {
      await page.goto(w.origin + then);
      await page.type('#username', u.name);
      await page.type('#password', u.password);
      return submit(page, 'form[action="/web/sign-in"] button');
    },
  };
}
