import { mkdirSync } from 'node:fs';
import type { Browser, HTTPRequest, Page } from 'puppeteer-core';
import { check, launchBrowser, SHOTS, submit } from '../helpers/browser';
import { freshDatabase } from '../helpers/db';
import {
  basicAuth,
  cli,
  onFreePort,
  startOidcProvider,
  startServer,
  stopServer,
  type OidcProvider,
  type ServerProcess,
} from '../helpers/process';

// Sign-in with OpenID Connect, end to end: a real provider (oidc-provider) on loopback, castsync as
// `npm start` runs it, and Debian's Chromium following every redirect. A person signs in at the provider,
// lands signed in, and lets a Nextcloud-mode app in; the app's password syncs. Answers that do not check
// out (a tampered state or nonce, another issuer, an expired code, a refusal) are pages, never a 500.
// The server's request log, at info, holds neither the login flow's code nor the provider's code and state.

const CLIENT_SECRET = 'castsync-test-secret';
const PEOPLE = {
  'person-ada-1': { preferred_username: 'ada', groups: ['castsync-admins'] },
  'person-bob-2': { preferred_username: 'bob' },
};

let database: Awaited<ReturnType<typeof freshDatabase>>;
let provider: OidcProvider;
let server: ServerProcess;
let browser: Browser;
let origin: string;
const callback = () => `${origin}/web/sign-in/oidc/callback`;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  database = await freshDatabase();
  const env = { DATABASE_URL: database.url };
  // ada was made for single sign-on by the administrator; bob was not made at all.
  expect(cli(['user', 'add', 'ada', '--sso'], env).status).toBe(0);
  // The server's address is in its PUBLIC_URL and in the provider's redirect: a port taken before the
  // server listens is given up for another, with a provider of its own.
  await onFreePort(async (port) => {
    origin = `http://127.0.0.1:${port}`;
    provider = await startOidcProvider(
      { client_id: 'castsync', client_secret: CLIENT_SECRET, redirect_uris: [callback()] },
      PEOPLE,
    );
    try {
      server = await startServer(
        {
          ...env,
          LOG_LEVEL: 'info',
          PUBLIC_URL: origin,
          OIDC_ISSUER: provider.issuer,
          OIDC_CLIENT_ID: 'castsync',
          OIDC_CLIENT_SECRET: CLIENT_SECRET,
          OIDC_SCOPES: 'openid profile groups',
          OIDC_ADMIN_GROUP: 'castsync-admins',
          OIDC_BUTTON_LABEL: 'Sign in with Pocket ID',
        },
        90_000,
        { port },
      );
    } catch (e) {
      await provider.stop();
      throw e;
    }
  });
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (server) await stopServer(server);
  await provider?.stop();
  await database?.drop();
});

async function newPage(): Promise<Page> {
  const page = await (await browser.createBrowserContext()).newPage();
  await page.setViewport({ width: 1280, height: 800 });
  return page;
}

/** On the provider's own pages: its login (any password), then its consent; the status castsync answers. */
async function signInAtProvider(page: Page, sub: string): Promise<number> {
  await page.waitForSelector('input[name="login"]');
  await page.type('input[name="login"]', sub);
  await page.type('input[name="password"]', 'any password');
  await submit(page, 'button[type="submit"]');
  await page.waitForSelector('input[name="prompt"][value="consent"]');
  return submit(page, 'button[type="submit"]');
}

/** Rewrites the first request the browser makes whose URL starts with `prefix`. */
async function rewriteOnce(page: Page, prefix: string, rewrite: (url: URL) => void): Promise<void> {
  await page.setRequestInterception(true);
  let done = false;
  page.on('request', (req: HTTPRequest) => {
    if (done || !req.url().startsWith(prefix)) return void req.continue();
    done = true;
    const url = new URL(req.url());
    rewrite(url);
    void req.continue({ url: url.href });
  });
}

const signedInAs = async (page: Page): Promise<string | undefined> => {
  await page.goto(`${origin}/web/account`);
  return page.$eval('.signout button', (b) => b.textContent?.trim()).catch(() => undefined);
};

test('sign in at the provider, land signed in, let a Nextcloud-mode app in: its app password syncs', async () => {
  const start = await fetch(`${origin}/index.php/login/v2`, { method: 'POST', headers: { 'user-agent': 'Kasts' } });
  const { poll, login } = (await start.json()) as { poll: { token: string; endpoint: string }; login: string };

  const page = await newPage();
  const answers: URL[] = [];
  page.on('request', (req) => {
    if (req.url().startsWith(callback())) answers.push(new URL(req.url()));
  });
  await page.goto(login);
  expect(new URL(page.url()).pathname).toBe('/');
  await check(page, 'sso-sign-in');
  const [button] = await page.$$eval('a[href^="/web/sign-in/oidc"]', (b) => b.map((x) => x.textContent));
  expect(button).toBe('Sign in with Pocket ID');
  await Promise.all([page.waitForNavigation(), page.click('a[href^="/web/sign-in/oidc"]')]);
  expect(page.url().startsWith(provider.issuer)).toBe(true);

  expect(await signInAtProvider(page, 'person-ada-1')).toBe(200);
  expect(page.url()).toBe(login);
  expect(await page.$eval('h1', (h) => h.textContent)).toBe('Allow Kasts to access your account?');
  await check(page, 'sso-approve');
  expect(await submit(page, 'main form button[type="submit"]')).toBe(200);
  expect(await page.$eval('h1', (h) => h.textContent)).toBe('Kasts is allowed in');

  const answer = await fetch(poll.endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: poll.token }),
  });
  const { loginName, appPassword } = (await answer.json()) as { loginName: string; appPassword: string };
  expect(loginName).toBe('ada');
  const sync = await fetch(`${origin}/index.php/apps/gpoddersync/subscriptions?since=0`, {
    headers: { authorization: basicAuth('ada', appPassword) },
  });
  expect(sync.status).toBe(200);

  // What a log reader could use is not in the log: the code that allows an app, the provider's answer.
  const flowCode = decodeURIComponent(new URL(login).pathname.split('/').pop()!);
  expect(answers).toHaveLength(1);
  const secrets = [flowCode, answers[0]!.searchParams.get('code')!, answers[0]!.searchParams.get('state')!];
  expect(server.log()).toContain('/web/sign-in/oidc/callback?code=[redacted]&state=[redacted]');
  for (const secret of secrets) expect(server.log()).not.toContain(secret);

  // The provider's group made ada an administrator; she has no castsync password, and needs none.
  await page.goto(`${origin}/web/account`);
  expect(await page.$$eval('nav a', (a) => a.map((x) => x.textContent))).toContain('Users');
  expect(await page.$eval('main', (m) => m.textContent)).toContain('have no castsync password');

  // Signing out ends castsync's session, and offers the provider's.
  expect(await submit(page, '.signout button')).toBe(200);
  expect(await page.$eval('main', (m) => m.textContent)).toContain('You are signed out of castsync.');
  const link = await page.$eval('main a[href^="http"]', (a) => a.getAttribute('href') ?? '');
  expect(link.startsWith(`${provider.issuer}/session/end`)).toBe(true);
  await check(page, 'sso-signed-out');
  expect(await signedInAs(page)).toBeUndefined();
}, 60_000);

/**
 * Starts a sign-in on a fresh page, the first request to `rewrite.prefix` rewritten if given; the page is
 * then at the provider's login.
 */
async function startSignIn(rewrite?: { prefix: string; change: (url: URL) => void }): Promise<Page> {
  const page = await newPage();
  if (rewrite) await rewriteOnce(page, rewrite.prefix, rewrite.change);
  await page.goto(origin);
  await Promise.all([page.waitForNavigation(), page.click('a[href^="/web/sign-in/oidc"]')]);
  return page;
}

/** A sign-in whose answer is refused: the status and message of castsync's page; nobody is signed in. */
async function refusedPage(
  page: Page,
  sub = 'person-ada-1',
  shot?: string,
): Promise<{ status: number; message: string }> {
  const status = await signInAtProvider(page, sub);
  const message = await page.$eval('main', (m) => m.textContent ?? '');
  if (shot) await check(page, shot);
  expect(await signedInAs(page)).toBeUndefined();
  return { status, message };
}

test('a tampered state is refused with a page', async () => {
  const page = await startSignIn({ prefix: callback(), change: (url) => url.searchParams.set('state', 'tampered') });
  const r = await refusedPage(page, 'person-ada-1', 'sso-refused');
  expect(r.status).toBe(400);
  expect(r.message).toMatch(/This sign-in's answer did not check out \(.*state.*\)\. Sign in again/);
}, 60_000);

test('a tampered nonce is refused with a page', async () => {
  const prefix = `${provider.issuer}/auth?`;
  const page = await startSignIn({ prefix, change: (url) => url.searchParams.set('nonce', 'tampered') });
  const r = await refusedPage(page);
  expect(r.status).toBe(400);
  expect(r.message).toMatch(/did not check out \(.*nonce.*\)/);
}, 60_000);

test('an answer from another issuer is refused with a page', async () => {
  const change = (url: URL) => url.searchParams.set('iss', 'https://evil.example');
  const r = await refusedPage(await startSignIn({ prefix: callback(), change }));
  expect(r.status).toBe(400);
  expect(r.message).toMatch(/did not check out \(.*iss.*\)/);
}, 60_000);

test("the provider's refusal is a page that says so", async () => {
  const change = (url: URL) => {
    const { state = '', iss = '' } = Object.fromEntries(url.searchParams);
    url.search = new URLSearchParams({ error: 'access_denied', error_description: 'not today', state, iss }).toString();
  };
  const r = await refusedPage(await startSignIn({ prefix: callback(), change }));
  expect(r.status).toBe(403);
  expect(r.message).toContain('The identity provider did not sign you in (not today).');
}, 60_000);

test('an expired code is refused with a page', async () => {
  await provider.setCodeTtl(1);
  try {
    const page = await startSignIn();
    // The provider's answer is held until its code has expired, then delivered.
    await page.setRequestInterception(true);
    let held: string | undefined;
    page.on('request', (req) => {
      if (held === undefined && req.url().startsWith(callback())) {
        held = req.url();
        return void req.abort();
      }
      void req.continue();
    });
    await signInAtProvider(page, 'person-ada-1').catch(() => 0);
    expect(held).toBeDefined();
    await new Promise((r) => setTimeout(r, 2500));
    const response = await page.goto(held!);
    expect(response!.status()).toBe(400);
    expect(await page.$eval('main', (m) => m.textContent)).toMatch(/The identity provider refused this sign-in \(.+\)/);
    expect(await signedInAs(page)).toBeUndefined();
  } finally {
    await provider.setCodeTtl(60);
  }
}, 60_000);

test('a person the provider knows but castsync does not is refused, as SSO_CREATE_USERS is off', async () => {
  const page = await startSignIn();
  const r = await refusedPage(page, 'person-bob-2');
  expect(r.status).toBe(403);
  expect(r.message).toContain('There is no castsync user bob');
}, 60_000);

test('a callback without its sign-in (another browser, or expired) is a page', async () => {
  const r = await fetch(`${callback()}?code=abc&state=def`);
  expect(r.status).toBe(400);
  expect(await r.text()).toContain('This sign-in has expired (after 10 minutes) or was started in another browser');
});

test('a provider whose issuer is not the configured one cannot be used: a page, not a 500', async () => {
  const other = await freshDatabase();
  const misconfigured = await onFreePort((port) =>
    startServer(
      {
        DATABASE_URL: other.url,
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        OIDC_ISSUER: provider.issuer.replace('127.0.0.1', 'localhost'),
        OIDC_CLIENT_ID: 'castsync',
        OIDC_CLIENT_SECRET: CLIENT_SECRET,
      },
      90_000,
      { port },
    ),
  );
  try {
    const page = await newPage();
    await page.goto(misconfigured.origin);
    expect(await submit(page, 'a[href^="/web/sign-in/oidc"]')).toBe(502);
    expect(await page.$eval('main', (m) => m.textContent)).toContain('The identity provider could not be used');
    // The log reaches this process through a pipe, maybe after the page: wait for it, at most 10 s.
    const deadline = Date.now() + 10_000;
    while (!misconfigured.log().includes('could not be discovered') && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(misconfigured.log()).toContain('the OpenID provider could not be discovered');
  } finally {
    await stopServer(misconfigured);
    await other.drop();
  }
}, 120_000);
