import request from 'supertest';
import { as, expectError, testApp, type TestApp, type TestUser } from '../helpers/app';

// Edges of the API's input that the contracts answer (../shared/CONTRACT.md, ../shared/CONTRACT-gpodder.md)
// and that no broader test reaches: each one once answered differently.

let t: TestApp;
let u: TestUser;
beforeAll(async () => {
  t = await testApp({ AUTH_FAILURE_RATE_LIMIT: '100000' });
  u = await t.user('edges');
});
afterAll(() => t.close());

describe('a body whose Content-Encoding does not decode', () => {
  // JSON text labelled gzip or deflate: zlib refuses it before the JSON parser sees it.
  const corrupt = (path: string, encoding: string) =>
    request(t.app)
      .post(path)
      .set('Authorization', u.basic)
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', encoding)
      .send('{"subscriptions":[]}');

  test('/v1: 405, the body cannot be validated; never a 500', async () => {
    expectError(await corrupt('/v1/subscriptions', 'gzip'), 405, /^Input could not be validated/);
    expectError(await corrupt('/v1/subscriptions', 'deflate'), 405, /^Input could not be validated/);
  });

  test('gpodder and Nextcloud: 400; never a 500', async () => {
    expectError(await corrupt(`/api/2/subscriptions/${u.name}/phone.json`, 'gzip'), 400);
    expectError(await corrupt(`/api/2/episodes/${u.name}.json`, 'deflate'), 400);
    expectError(await corrupt('/index.php/apps/gpoddersync/subscription_change/create', 'gzip'), 400);
  });
});

describe('gpodder since past the year 9999', () => {
  // 999999999999 s is in the year 33658: a whole number of seconds, which the contract accepts.
  const far = '999999999999';
  test('episode actions (gpodder and Nextcloud) and subscriptions: 200 with nothing, never a 500', async () => {
    const me = as(t, u);
    await me.post(`/api/2/episodes/${u.name}.json`, [
      { podcast: 'https://far.example/feed', episode: 'https://far.example/1.mp3', action: 'download' },
    ]);
    for (const path of [
      `/api/2/episodes/${u.name}.json?since=${far}`,
      `/api/2/episodes/${u.name}.json?since=${far}&aggregated=true`,
      `/index.php/apps/gpoddersync/episode_action?since=${far}`,
    ]) {
      const r = await me.get(path);
      expect({ path, status: r.status, body: r.body }).toEqual({
        path,
        status: 200,
        body: { actions: [], timestamp: expect.any(Number) },
      });
    }
    const subs = await me.get(`/api/2/subscriptions/${u.name}/phone.json?since=${far}`);
    expect(subs.status).toBe(200);
    expect(subs.body).toMatchObject({ add: [], remove: [] });
  });
});

test('/v1/capabilities with a method it does not answer: 405 with Allow, as every known path', async () => {
  for (const method of ['post', 'put', 'patch', 'delete', 'options'] as const) {
    const r = await request(t.app)[method]('/v1/capabilities');
    expectError(r, 405, 'Method not allowed');
    expect(r.headers.allow).toBe('GET, HEAD');
    expect(r.headers['cache-control']).toBe('no-store');
  }
  expect((await request(t.app).get('/v1/capabilities')).status).toBe(200);
  expect((await request(t.app).head('/v1/capabilities')).status).toBe(200);
});

test('episode actions filtered by a device id outside the id rules: 400, as every other device id', async () => {
  const me = as(t, u);
  await me.post(`/api/2/episodes/${u.name}.json`, [
    { podcast: 'https://dev.example/feed', episode: 'https://dev.example/1.mp3', action: 'new', device: 'phone' },
  ]);
  for (const device of ['bad device', 'x'.repeat(65), 'a/b', 'ünï']) {
    const r = await me.get(`/api/2/episodes/${u.name}.json?device=${encodeURIComponent(device)}`);
    expectError(r, 400, /^Invalid device/);
  }
  // An id within the rules filters, an empty one filters nothing (docs/clients.md).
  expect((await me.get(`/api/2/episodes/${u.name}.json?device=tablet.local`)).status).toBe(200);
  expect((await me.get(`/api/2/episodes/${u.name}.json?device=`)).body.actions).toEqual(
    expect.arrayContaining([expect.objectContaining({ episode: 'https://dev.example/1.mp3', device: 'phone' })]),
  );
});

test('a subscription upload of over 10,000 URLs in add and remove together: 400, and nothing of it applied', async () => {
  const me = as(t, u);
  const urls = (list: string, n: number) => Array.from({ length: n }, (_, i) => `https://${list}.example/${i}`);
  for (const path of [
    `/api/2/subscriptions/${u.name}/phone.json`,
    '/index.php/apps/gpoddersync/subscription_change/create',
  ]) {
    const r = await me.post(path, { add: urls('many-added', 6000), remove: urls('many-removed', 4001) });
    expectError(r, 400, /10000 URLs/);
  }
  expect((await me.get(`/api/2/subscriptions/${u.name}/phone.json`)).body.add).not.toContain(
    'https://many-added.example/0',
  );
  // 10,000 in all is within the cap.
  const r = await me.post(`/api/2/subscriptions/${u.name}/phone.json`, {
    add: urls('many-added', 6000),
    remove: urls('many-removed', 4000),
  });
  expect(r.status).toBe(200);
});

test('a deletion id of 16 digits or more, or with leading zeros, is a whole number the user does not have: 404', async () => {
  const me = as(t, u);
  for (const id of [
    '9007199254740991',
    '9223372036854775807',
    '9223372036854775808',
    '1'.repeat(40),
    '0'.repeat(20) + '7',
  ]) {
    expectError(await me.get(`/v1/deletions/${id}`), 404, 'Resource not found');
  }
  // Not a whole number: the path cannot be validated.
  for (const id of ['-1', '1.5', '1e3', 'abc']) expectError(await me.get(`/v1/deletions/${id}`), 405);
});

test('a session id of 16 digits or more is a whole number the user does not have: 404 at DELETE /v1/auth/sessions', async () => {
  const me = as(t, u);
  for (const id of ['9223372036854775807', '1'.repeat(40), '0'.repeat(20) + '7']) {
    expectError(await me.del(`/v1/auth/sessions/${id}`), 404, 'Resource not found');
  }
  expectError(await me.del('/v1/auth/sessions/abc'), 405);
});

test('gpodder bodies are JSON whatever their Content-Type says, a charset other than UTF-8 included', async () => {
  const me = as(t, u);
  const send = (path: string, type: string, body: unknown) =>
    request(t.app).post(path).set('Authorization', u.basic).set('Content-Type', type).send(JSON.stringify(body));
  // Apache HttpClient's StringEntity labels its text so by default.
  const types = ['text/plain; charset=ISO-8859-1', 'application/x-www-form-urlencoded; charset=windows-1252'];
  for (const [i, type] of types.entries()) {
    const feed = `https://charset${i}.example/feed`;
    const upload = await send(`/api/2/subscriptions/${u.name}/phone.json`, type, { add: [feed], remove: [] });
    expect({ type, status: upload.status }).toEqual({ type, status: 200 });
    const nc = await send('/index.php/apps/gpoddersync/subscription_change/create', type, { add: [feed + '2'] });
    expect({ type, status: nc.status }).toEqual({ type, status: 200 });
    const actions = await send(`/api/2/episodes/${u.name}.json`, type, [
      { podcast: feed, episode: `${feed}/1.mp3`, action: 'download' },
    ]);
    expect({ type, status: actions.status, skipped: actions.body.skipped }).toEqual({
      type,
      status: 200,
      skipped: undefined,
    });
    const device = await send(`/api/2/devices/${u.name}/charset${i}.json`, type, {
      caption: 'Charset',
      type: 'mobile',
    });
    expect({ type, status: device.status }).toEqual({ type, status: 200 });
  }
  const added = (await me.get(`/api/2/subscriptions/${u.name}/phone.json`)).body.add as string[];
  expect(added).toEqual(expect.arrayContaining(['https://charset0.example/feed', 'https://charset1.example/feed2']));
});

test('the gpodder directory routes (search, toplist) answer Cache-Control: no-store, as every gpodder answer', async () => {
  for (const path of ['/toplist/10.json', '/toplist.opml', '/search.json', '/toplist/x.json']) {
    const r = await request(t.app).get(path);
    expect({ path, cacheControl: r.headers['cache-control'] }).toEqual({ path, cacheControl: 'no-store' });
  }
});
