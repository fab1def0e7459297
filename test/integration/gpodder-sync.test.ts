import request from 'supertest';
import { as, sessionCookieOf, testApp, type TestApp } from '../helpers/app';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

describe.each([
  ['sends the timestamp back (AntennaPod, gPodder)', 0],
  ['sends the timestamp + 1 (Kasts)', 1],
])('lossless: a reader that %s', (_name, plus) => {
  test('ends with exactly the server list while writers add and remove through /v1 and gpodder', async () => {
    const u = await t.user();
    const api = as(t, u);
    const feed = (k: number) => `https://lossless.example/${k}.xml`;
    const reader = new Set<string>();
    let since = 0;
    const pullOnce = async () => {
      const r = await api.get(`/api/2/subscriptions/${u.name}/reader.json?since=${since}`);
      expect(r.status).toBe(200);
      for (const url of r.body.remove as string[]) reader.delete(url);
      for (const url of r.body.add as string[]) reader.add(url);
      since = (r.body.timestamp as number) + plus;
    };
    let writing = true;
    const writers = Array.from({ length: 3 }, async (_, w) => {
      for (let i = 0; writing; i++) {
        const k = (w * 7 + i * 3) % 40;
        if (i % 3 === 0) await api.post('/v1/subscriptions', { subscriptions: [{ feed_url: feed(k) }] });
        else if (i % 3 === 1)
          await api.post(`/api/2/subscriptions/${u.name}/w${w}.json`, { add: [], remove: [feed(k)] });
        else await api.post(`/index.php/apps/gpoddersync/subscription_change/create`, { add: [feed(k)], remove: [] });
      }
    });
    const readerLoop = (async () => {
      while (writing) await pullOnce();
    })();
    await new Promise((r) => setTimeout(r, 2500));
    writing = false;
    await Promise.all([...writers, readerLoop]);
    await pullOnce();
    const server = (await api.get(`/subscriptions/${u.name}.json`)).body as string[];
    expect(server.length).toBeGreaterThan(0);
    expect([...reader].sort()).toEqual([...server].sort());
  });
});

describe('sessions through /v1', () => {
  test('a gpodder session and a /v1 login are listed; revoking the gpodder one ends its cookie', async () => {
    const u = await t.user();
    const login = await request(t.app).post(`/api/2/auth/${u.name}/login.json`).set('Authorization', u.basic);
    const cookie = sessionCookieOf(login);
    await request(t.app).post('/v1/auth/login').send({ username: u.name, password: u.password });
    const list = await as(t, u).get('/v1/auth/sessions');
    expect(list.status).toBe(200);
    expect(list.body.map((s: { kind: string }) => s.kind).sort()).toEqual(['gpodder', 'login']);
    const gpodder = list.body.find((s: { kind: string; id: number }) => s.kind === 'gpodder');
    // Every listed gpodder session can be revoked; the one the cookie names among them.
    for (const s of list.body.filter((x: { kind: string }) => x.kind === 'gpodder')) {
      expect((await as(t, u).del(`/v1/auth/sessions/${s.id}`)).status).toBe(204);
    }
    expect(gpodder).toBeDefined();
    const after = await request(t.app).get(`/api/2/devices/${u.name}.json`).set('Cookie', `sessionid=${cookie}`);
    expect(after.status).toBe(401);
    const other = await t.user();
    const theirs = (await as(t, u).get('/v1/auth/sessions')).body[0].id as number;
    expect((await as(t, other).del(`/v1/auth/sessions/${theirs}`)).status).toBe(404);
  });
});

describe('OPML on /v1', () => {
  test("one user's export imports into another; nested outlines and url attributes are read", async () => {
    const a = await t.user();
    const b = await t.user();
    await as(t, a).post('/v1/subscriptions', {
      subscriptions: [{ feed_url: 'https://opml.example/1.xml' }, { feed_url: "https://opml.example/2.xml?x=1&y='2'" }],
    });
    const exported = await as(t, a).get('/v1/subscriptions.opml');
    expect(exported.status).toBe(200);
    expect(exported.headers['content-type']).toBe('text/x-opml; charset=utf-8');
    expect(exported.text).toContain('xmlUrl="https://opml.example/2.xml?x=1&amp;y=&apos;2&apos;"');
    const imported = await request(t.app)
      .post('/v1/subscriptions.opml')
      .set('Authorization', b.basic)
      .set('Content-Type', 'text/x-opml')
      .send(exported.text);
    expect(imported.status).toBe(200);
    expect(imported.body.success.map((s: { feed_url: string }) => s.feed_url)).toEqual([
      'https://opml.example/1.xml',
      "https://opml.example/2.xml?x=1&y='2'",
    ]);
    const nested = `<opml version="1.0"><body><outline text="folder"><outline text="x" type="rss" url="https://opml.example/3.xml"/><outline text="bad" xmlUrl="ftp://opml.example/4"/></outline></body></opml>`;
    const more = await request(t.app).post('/v1/subscriptions.opml').set('Authorization', b.basic).send(nested);
    expect(more.body).toEqual({
      success: [expect.objectContaining({ feed_url: 'https://opml.example/3.xml' })],
      failure: [{ feed_url: 'ftp://opml.example/4', message: 'Unsupported protocol' }],
    });
    const bad = await request(t.app).post('/v1/subscriptions.opml').set('Authorization', b.basic).send('<html>');
    expect(bad.status).toBe(405);
  });

  test('more than 1,000 feeds are imported in chunks, not refused', async () => {
    const u = await t.user();
    const outlines = Array.from({ length: 1200 }, (_, k) => `<outline xmlUrl="https://many.example/${k}.xml"/>`);
    const r = await request(t.app)
      .post('/v1/subscriptions.opml')
      .set('Authorization', u.basic)
      .send(`<opml version="2.0"><body>${outlines.join('')}</body></opml>`);
    expect(r.status).toBe(200);
    expect(r.body.success).toHaveLength(1200);
    expect((await as(t, u).get('/v1/subscriptions')).body.total).toBe(1200);
  });
});
