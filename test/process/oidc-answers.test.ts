import { freshDatabase } from '../helpers/db';
import {
  onFreePort,
  startOidcProvider,
  startServer,
  stopServer,
  type OidcProvider,
  type ServerProcess,
} from '../helpers/process';

// The sign-in callback's answers, without a browser: castsync as `npm start` runs it, a real provider
// (oidc-provider) on loopback, and its development login followed with fetch. Whatever the provider says
// or fails to say, the person gets a page that tells them what happened, never a 500.

const CLIENT_SECRET = 'castsync-answers-secret';
const PEOPLE = {
  'person-ada-1': { preferred_username: 'ada' },
  // A name claim that no castsync user can have, and that the database cannot even look up.
  'person-nul-2': { preferred_username: 'nu\u0000l' },
};

let database: Awaited<ReturnType<typeof freshDatabase>>;
let provider: OidcProvider;
let server: ServerProcess;
let origin: string;
const callback = () => `${origin}/web/sign-in/oidc/callback`;

beforeAll(async () => {
  database = await freshDatabase();
  await onFreePort(async (port) => {
    origin = `http://127.0.0.1:${port}`;
    provider = await startOidcProvider(
      { client_id: 'castsync', client_secret: CLIENT_SECRET, redirect_uris: [callback()] },
      PEOPLE,
    );
    try {
      server = await startServer(
        {
          DATABASE_URL: database.url,
          PUBLIC_URL: origin,
          OIDC_ISSUER: provider.issuer,
          OIDC_CLIENT_ID: 'castsync',
          OIDC_CLIENT_SECRET: CLIENT_SECRET,
          SSO_CREATE_USERS: 'true',
          OIDC_TIMEOUT: '2',
        },
        90_000,
        { port },
      );
    } catch (e) {
      await provider.stop();
      throw e;
    }
  });
}, 120_000);

afterAll(async () => {
  if (server) await stopServer(server);
  await provider?.stop();
  await database?.drop();
});

/** One browser's cookies for one site. */
class Jar {
  private cookies = new Map<string, string>();
  take(res: Response): void {
    for (const c of res.headers.getSetCookie()) {
      const pair = c.split(';')[0]!;
      const eq = pair.indexOf('=');
      this.cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
  }
  header = (): string => [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
}

/** The provider's development login and consent for `sub`, followed until it sends the browser back. */
async function atProvider(authorize: string, sub: string): Promise<string> {
  const jar = new Jar();
  let url = authorize;
  let form: URLSearchParams | undefined;
  for (let step = 0; step < 20; step++) {
    const res = await fetch(url, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: { cookie: jar.header() },
      body: form,
    });
    jar.take(res);
    form = undefined;
    const location = res.headers.get('location');
    if (location !== null) {
      url = new URL(location, url).href;
      if (url.startsWith(callback())) return url;
      continue;
    }
    const html = await res.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (action === undefined) throw new Error(`the provider's page has no form: ${res.status}\n${html}`);
    url = new URL(action, url).href;
    form = html.includes('name="login"')
      ? new URLSearchParams({ prompt: 'login', login: sub, password: 'any password' })
      : new URLSearchParams({ prompt: 'consent' });
  }
  throw new Error('the provider never sent the browser back');
}

/** A sign-in as `sub` in a fresh browser, up to the provider's answer: the answer and castsync's cookies. */
async function answered(sub: string): Promise<{ answer: string; jar: Jar }> {
  const jar = new Jar();
  const start = await fetch(`${origin}/web/sign-in/oidc`, { redirect: 'manual' });
  expect(start.status).toBe(303);
  jar.take(start);
  return { answer: await atProvider(start.headers.get('location')!, sub), jar };
}

const message = (html: string): string => /<main[^>]*>([\s\S]*?)<\/main>/.exec(html)?.[1] ?? html;

test('an answer followed to its end signs the person in', async () => {
  const { answer, jar } = await answered('person-ada-1');
  const r = await fetch(answer, { redirect: 'manual', headers: { cookie: jar.header() } });
  expect(r.status).toBe(303);
  expect(r.headers.getSetCookie().some((c) => c.startsWith('castsync_web=csw_'))).toBe(true);
}, 30_000);

test('a name claim the database cannot hold (U+0000) is refused with a page that says so', async () => {
  const { answer, jar } = await answered('person-nul-2');
  const r = await fetch(answer, { redirect: 'manual', headers: { cookie: jar.header() } });
  expect(r.status).toBe(403);
  expect(message(await r.text())).toContain('which is not a castsync username');
  expect(server.log()).not.toContain('unhandled error');
}, 30_000);

/** A sign-in whose token request the provider answers after `delay` ms with `status`: castsync's page. */
async function signInWithTokenAnswer(delay: number, status = 0): Promise<{ status: number; message: string }> {
  await provider.setTokenAnswer(delay, status);
  try {
    const { answer, jar } = await answered('person-ada-1');
    const r = await fetch(answer, { redirect: 'manual', headers: { cookie: jar.header() } });
    return { status: r.status, message: message(await r.text()) };
  } finally {
    await provider.setTokenAnswer(0);
  }
}

test('a token request the provider does not answer within OIDC_TIMEOUT gets 502, and the next sign-in works', async () => {
  const page = await signInWithTokenAnswer(5_000);
  expect(page.status).toBe(502);
  expect(page.message).toContain('The identity provider did not answer');
  const { answer, jar } = await answered('person-ada-1');
  expect((await fetch(answer, { redirect: 'manual', headers: { cookie: jar.header() } })).status).toBe(303);
}, 30_000);

test("a server error at the provider's token endpoint gets 502, not a page that blames the answer", async () => {
  const page = await signInWithTokenAnswer(0, 503);
  expect(page.status).toBe(502);
  expect(page.message).toContain('The identity provider did not answer');
}, 30_000);
