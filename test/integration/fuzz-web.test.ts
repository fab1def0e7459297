import fc from 'fast-check';
import request from 'supertest';
import { setAdmin } from '../../src/auth/accounts';
import { as, testApp, type TestApp, type TestUser } from '../helpers/app';
import { hostileString, LEAKS, urlEncoded, userData } from '../helpers/fuzz';
import { signedInAgent } from '../helpers/web';

// Bounded by its count, not by time; a slow machine (CI's 2 cores, the suite's other worker) may take
// several times a minute, which is no failure.
const FUZZ_TIMEOUT_MS = 300_000;

// Every form of the web page, sent by a signed-in browser with its valid form token and fields that are
// random or hostile (fixed seed, bounded count): no 5xx, nothing of the server's insides on a page, the
// user's data unchanged by every refused form, and the session and the server fine at the end.

const SEED = 46;
const RUNS_PER_FORM = 25;
/** Forms that end the session or the account, or erase everything: what they do is tested elsewhere. */
const SPARED = /sign-out|start-over|revoke|\/remove$|\/admin\/users\/[^/]+\/admin$/;

type Agent = ReturnType<typeof request.agent>;
type Form = { method: string; action: string; multipart: boolean; fields: Record<string, string>; agent: Agent };

let t: TestApp;
let u: TestUser;
let browser: Awaited<ReturnType<typeof signedInAgent>>;
let pages: string[];

beforeAll(async () => {
  t = await testApp({ AUTH_FAILURE_RATE_LIMIT: '1000000', LOGIN_RATE_LIMIT: '1000000', ALLOW_REGISTRATION: 'true' });
  u = await t.user('webfuzz');
  await setAdmin(t.db, u.name, true);
  const me = as(t, u);
  const feeds = ['https://web.example/a', 'https://WEB.example/a/'].map((feed_url) => ({ feed_url }));
  const added = await me.post('/v1/subscriptions', { subscriptions: feeds });
  await me.post(`/api/2/episodes/${u.name}.json`, [
    { podcast: 'https://web.example/a', episode: 'https://web.example/1.mp3', action: 'play', position: 5 },
  ]);
  browser = await signedInAgent(t.app, u.name, u.password);
  const guid = added.body.success[0].guid as string;
  pages = ['/web/subscriptions', '/web/account', '/web/app-passwords', '/web/devices', '/web/activity']
    .concat(['/web/duplicates', '/web/in-progress', '/web/new', '/web/moving', '/web/admin/users'])
    .concat([`/web/subscriptions/${guid}/episodes`]);
});
afterAll(() => t.close());

/** The forms of a page: method, action, encoding, and each field with the value the page gives it. */
function formsOf(html: string, agent: Agent): Form[] {
  return [...html.matchAll(/<form([^>]*)>([\s\S]*?)<\/form>/g)].map(([, attrs, inner]) => {
    const attr = (s: string, name: string) => new RegExp(`${name}="([^"]*)"`).exec(s)?.[1];
    const fields: Record<string, string> = {};
    for (const [tag] of inner!.matchAll(/<(input|select|textarea|button)\b[^>]*>/g)) {
      const name = attr(tag, 'name');
      if (name) fields[name] = (attr(tag, 'value') ?? '').replace(/&amp;/g, '&');
    }
    return {
      method: (attr(attrs!, 'method') ?? 'get').toLowerCase(),
      action: (attr(attrs!, 'action') ?? '').replace(/&amp;/g, '&'),
      multipart: attr(attrs!, 'enctype') === 'multipart/form-data',
      fields,
      agent,
    };
  });
}

/** Each field: the page's value, random text or a hostile string; the form token stays the page's. */
const filled = (form: Form) =>
  fc.record(
    Object.fromEntries(
      Object.entries(form.fields).map(([name, value]) => [
        name,
        name === '_csrf'
          ? fc.constant(value)
          : fc.oneof(fc.constant(value), fc.string({ maxLength: 30 }), hostileString),
      ]),
    ),
  );

function submit(form: Form, values: Record<string, string>, file: string) {
  const { agent } = form;
  if (form.method === 'get') {
    const q = Object.entries(values).map(([k, v]) => `${urlEncoded(k)}=${urlEncoded(v.slice(0, 5000))}`);
    return agent.get(`${form.action}?${q.join('&')}`);
  }
  if (!form.multipart) return agent.post(form.action).type('form').send(values);
  const r = agent.post(form.action);
  for (const [k, v] of Object.entries(values)) if (k !== 'opml' && k !== 'archive') r.field(k, v);
  const fileField = 'archive' in values ? 'archive' : 'opml';
  return r.attach(fileField, Buffer.from(file), 'upload.xml');
}

test(
  'every form of the web page, random and hostile: no 5xx, no leak, refusals change nothing',
  async () => {
    const problems: string[] = [];
    const forms = new Map<string, Form>();
    // The signed-in pages in the browser of the user; sign-in and sign-up in a browser signed in as no one.
    const anonymous = request.agent(t.app);
    const visits = [...pages.map((p) => [browser.agent, p] as const), [anonymous, '/'] as const].concat([
      [anonymous, '/web/register'],
    ]);
    for (const [agent, page] of visits) {
      for (const f of formsOf((await agent.get(page)).text, agent)) {
        if (!SPARED.test(f.action)) forms.set(`${f.method} ${f.action}`, f);
      }
    }
    expect(forms.size).toBeGreaterThan(10);
    const opml = fc
      .tuple(fc.oneof(fc.string({ maxLength: 20 }), hostileString), fc.constantFrom('&#0;', '\u0000', 'ok'))
      .map(
        ([title, odd]) =>
          `<opml version="2.0"><body><outline text="${title}${odd}" xmlUrl="https://o.example/${odd}"/></body></opml>`,
      );
    const file = fc.oneof(fc.string({ unit: 'binary', maxLength: 300 }), hostileString, opml);
    let seed = SEED;
    for (const form of forms.values()) {
      const sample = fc.sample(fc.tuple(filled(form), file), { seed: seed++, numRuns: RUNS_PER_FORM });
      for (const [values, content] of sample) {
        const before = await userData(t.db, u.id);
        const r = await submit(form, values as Record<string, string>, content);
        const what = `${form.method.toUpperCase()} ${form.action} ${JSON.stringify(values).slice(0, 200)} → ${r.status}`;
        if (r.status >= 500) problems.push(`${what}: ${r.text.slice(0, 300)}`);
        if (LEAKS.test(r.text ?? '')) problems.push(`${what}: leaks ${LEAKS.exec(r.text)![0]}`);
        if (r.status >= 400 && r.status < 500 && (await userData(t.db, u.id)) !== before) {
          problems.push(`${what}: refused, yet the user's data changed`);
        }
      }
    }
    // A few addresses of the page's own routes, broken in their path parameters.
    for (const bad of ['%00', '%ED%A0%80', 'x'.repeat(5000), '-1', '9'.repeat(40)]) {
      for (const path of ['/web/episodes/', '/web/subscriptions/', '/login/flow/']) {
        const r = await browser.agent.get(path + bad + (path === '/web/subscriptions/' ? '/episodes' : ''));
        if (r.status >= 500 || LEAKS.test(r.text)) problems.push(`GET ${path}${bad.slice(0, 20)} → ${r.status}`);
      }
    }
    expect(problems).toEqual([]);
    expect((await browser.agent.get('/web/subscriptions')).status).toBe(200);
    expect((await request(t.app).get('/readyz')).status).toBe(200);
  },
  FUZZ_TIMEOUT_MS,
);
