import fc from 'fast-check';
import { STATUS_CODES } from 'node:http';
import request from 'supertest';
import { as, testApp, type TestApp, type TestUser } from '../helpers/app';
import { fakeDirectory } from '../helpers/directory';
import { hostileString, hostileValue, LEAKS, urlEncoded, userData, valuesOf, type Schema } from '../helpers/fuzz';

// Bounded by its count, not by time; a slow machine (CI's 2 cores, the suite's other worker) may take
// several times a minute, which is no failure.
const FUZZ_TIMEOUT_MS = 300_000;

// Every operation of the server's own /openapi.json, sent schema-shaped and deliberately broken requests
// (fixed seed, bounded count): no 5xx, every error in its door's shape, nothing of the server's insides
// in a body, the server still ready, and the user's data unchanged by every request that was refused.

const SEED = 46;
const RUNS_PER_OPERATION = 40;

type Operation = {
  parameters?: { name: string; in: 'path' | 'query'; schema?: Schema }[];
  requestBody?: { content: Record<string, { schema?: Schema }> };
};
type Doc = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } };
type Sent = { method: string; path: string; type?: string; body?: string };

let t: TestApp;
let u: TestUser;
let doc: Doc;
/** Values of path parameters that name the user's own things. */
let good: Record<string, string>;

let directory: Awaited<ReturnType<typeof fakeDirectory>>;

beforeAll(async () => {
  // The podcast search reaches a directory on loopback: no test reaches the internet.
  directory = await fakeDirectory();
  t = await testApp({
    AUTH_FAILURE_RATE_LIMIT: '1000000',
    LOGIN_RATE_LIMIT: '1000000',
    DIRECTORY_URL: directory.url('/itunes'),
    FEED_FETCH_ALLOW_CIDRS: '127.0.0.0/8',
  });
  u = await t.user('fuzz');
  const me = as(t, u);
  const feeds = ['https://fuzz.example/feed', 'https://fuzz.example/gone'].map((feed_url) => ({ feed_url }));
  const [kept, gone] = (await me.post('/v1/subscriptions', { subscriptions: feeds })).body.success as {
    guid: string;
  }[];
  await me.post(`/api/2/episodes/${u.name}.json`, [
    { podcast: 'https://fuzz.example/feed', episode: 'https://fuzz.example/1.mp3', action: 'play', position: 5 },
  ]);
  const deletion = await me.del(`/v1/subscriptions/${gone!.guid}`);
  good = {
    user: u.name,
    device: 'phone',
    format: 'json',
    guid: kept!.guid,
    id: String(deletion.body.deletion_id),
    code: 'no-such-code',
  };
  doc = (await request(t.app).get('/openapi.json')).body as Doc;
});
afterAll(async () => {
  await t.close();
  await directory.close();
});

/** The requests of one operation: its parameters and body from the schemas, broken in about half. */
function requestsOf(path: string, method: string, op: Operation, seed: number): Sent[] {
  const params = op.parameters ?? [];
  const value = (p: (typeof params)[number], broken: boolean): fc.Arbitrary<string | undefined> => {
    const fine: fc.Arbitrary<string | undefined> =
      p.in === 'path' ? fc.constant(good[p.name] ?? 'x') : fc.option(valuesOf(p.schema ?? {}, {}, false).map(String));
    // A URL over Node's header limit (16 KiB) never reaches the app: hostile strings in a URL stay under it.
    const bad = fc.oneof(
      hostileString.filter((s) => s.length < 10_000),
      fc.string({ maxLength: 20 }),
    );
    return broken ? fc.oneof(fine, bad) : fine;
  };
  const content = Object.entries(op.requestBody?.content ?? {})[0];
  const arb = fc.boolean().chain((broken) =>
    fc.record({
      values: fc.tuple(...params.map((p) => value(p, broken)), fc.constant(undefined)),
      body: !content
        ? fc.constant(undefined)
        : content[0].includes('json')
          ? fc.oneof(
              valuesOf(content[1].schema ?? {}, doc.components.schemas, broken),
              ...(broken ? [hostileValue] : []),
            )
          : fc.oneof(fc.string({ maxLength: 200 }), hostileString),
    }),
  );
  return fc.sample(arb, { seed, numRuns: RUNS_PER_OPERATION }).map(({ values, body }) => {
    let url = path;
    const query = new URLSearchParams();
    params.forEach((p, i) => {
      const v = values[i];
      if (p.in === 'path') url = url.replace(`{${p.name}}`, urlEncoded(v ?? ''));
      else if (v !== undefined) query.append(p.name, v);
    });
    const q = query.toString();
    return {
      method,
      path: url + (q ? `?${q}` : ''),
      type: content?.[0],
      body:
        body === undefined
          ? undefined
          : typeof body === 'string' && !content![0].includes('json')
            ? body
            : JSON.stringify(body),
    };
  });
}

const send = (s: Sent) => {
  const r = request(t.app)[s.method as 'get'](s.path).set('Authorization', u.basic);
  return s.body === undefined ? r : r.set('Content-Type', s.type!).send(s.body);
};

/** The doors whose every error is `{code, message}`: the Open Podcast API (and its sync draft), gpodder.net, Nextcloud. */
const apiDoor = (path: string) => /^\/(v1|api\/v1|api\/2|subscriptions|index\.php|apps|login\/v2)\b/.test(path);

/** `{code, message}`; the sync draft's door adds its own names of them, `{error, description}`. */
function doorShaped(path: string, status: number, b: Record<string, unknown> | undefined): boolean {
  if (b?.code !== String(status) || typeof b.message !== 'string') return false;
  if (!/^\/api\/v1\b/.test(path)) return Object.keys(b).length === 2;
  return Object.keys(b).length === 4 && b.error === STATUS_CODES[status] && b.description === b.message;
}

test(
  'every operation of /openapi.json: no 5xx, errors in the door shape, nothing leaks, refusals change nothing',
  async () => {
    const problems: string[] = [];
    const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ path, method, op })),
    );
    expect(operations.length).toBeGreaterThan(40);
    for (const [i, { path, method, op }] of operations.entries()) {
      for (const s of requestsOf(path, method, op, SEED + i)) {
        const before = await userData(t.db, u.id);
        const r = await send(s);
        const what = `${s.method.toUpperCase()} ${s.path.slice(0, 200)} ${String(s.body).slice(0, 200)} → ${r.status}`;
        if (r.status >= 500) problems.push(`${what}: ${r.text.slice(0, 200)}`);
        if (r.status >= 400 && apiDoor(s.path)) {
          if (!doorShaped(s.path, r.status, r.body))
            problems.push(`${what}: not {code, message}: ${r.text.slice(0, 200)}`);
        }
        if (LEAKS.test(r.text ?? '') && !/^\/(openapi\.json|docs)/.test(s.path)) {
          problems.push(`${what}: leaks ${LEAKS.exec(r.text)![0]}`);
        }
        if (r.status >= 400 && r.status < 500 && (await userData(t.db, u.id)) !== before) {
          problems.push(`${what}: refused, yet the user's data changed`);
        }
      }
    }
    expect(problems).toEqual([]);
    expect((await request(t.app).get('/readyz')).status).toBe(200);
  },
  FUZZ_TIMEOUT_MS,
);
