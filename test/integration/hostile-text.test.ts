import fs from 'node:fs';
import request from 'supertest';
import { as, expectError, testApp, type TestApp, type TestUser } from '../helpers/app';
import { capturedLogger } from '../helpers/logs';
import { signedInAgent } from '../helpers/web';
import { openApiDocument } from '../../src/openapi';
import { runImport } from '../../src/transfer/service';
import { feedServer } from '../helpers/feed-server';
import { ARCHIVE_LIMITS, writeArchive } from '../helpers/gpodder-archive';
import { runImportJob } from '../../src/transfer/jobs';
import pino from 'pino';
import { servedRoutes } from '../helpers/routes';

// Text PostgreSQL cannot store (U+0000, lone surrogates) and bodies of the wrong shape: each door's own
// error, or on the app doors the item skipped and the rest applied; never a 500 (docs/hostile-input.md).

const NUL = '\u0000';
const captured = capturedLogger('info');
let t: TestApp;
let u: TestUser;
beforeAll(async () => {
  t = await testApp({ AUTH_FAILURE_RATE_LIMIT: '100000' }, captured.logger);
  u = await t.user('text');
});
afterAll(() => t.close());

const json = (path: string, body: string) =>
  request(t.app).post(path).set('Authorization', u.basic).set('Content-Type', 'application/json').send(body);

describe('U+0000 and lone surrogates in a request field', () => {
  test('/v1: the login username, a feed URL, a lone surrogate, a path: 405; a query parameter: 400', async () => {
    const login = await request(t.app)
      .post('/v1/auth/login')
      .send({ username: `a${NUL}b`, password: 'whatever1' });
    expectError(login, 405, /^Input could not be validated: username: contains U\+0000/);
    expectError(
      await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: `https://x.example/${NUL}` }] }),
      405,
    );
    // JSON.stringify writes a lone surrogate as the escape \ud800, which jsonb refuses.
    expectError(await json('/v1/subscriptions', '{"subscriptions":[{"feed_url":"https://x.example/\\ud800"}]}'), 405);
    expectError(await as(t, u).get('/v1/subscriptions/%00'), 405);
    expectError(await as(t, u).get('/v1/subscriptions?since=%00'), 400, /^Invalid since: /);
    expect((await as(t, u).get('/v1/subscriptions')).body.total).toBe(0);
  });

  test('gpodder: an upload skips the URL with its reason and applies the rest; the report is written', async () => {
    const path = `/api/2/subscriptions/${u.name}/phone.json`;
    const bad = `https://bad.example/${NUL}feed`;
    const r = await as(t, u).post(path, {
      add: [bad, 'https://good.example/feed'],
      remove: [`https://x.example/${NUL}`],
    });
    expect(r.status).toBe(200);
    expect(r.body.update_urls).toEqual([
      [bad, ''],
      [`https://x.example/${NUL}`, ''],
    ]);
    expect((await as(t, u).get(path)).body.add).toEqual(['https://good.example/feed']);
    const report = await t.db.query<{ skipped: { item: string }[] }>(
      'SELECT skipped FROM sync_reports WHERE user_id = $1',
      [u.id],
    );
    expect(report.rows[0]!.skipped.map((s) => s.item)).toContain('https://bad.example/feed');
  });

  test('gpodder: an episode action with such a field is skipped with its reason, the rest stored', async () => {
    const ok = { podcast: 'https://good.example/feed', episode: 'https://good.example/1.mp3', action: 'download' };
    const r = await as(t, u).post(`/api/2/episodes/${u.name}.json`, [{ ...ok, episode: `https://e/${NUL}` }, ok]);
    expect(r.status).toBe(200);
    expect(r.body.skipped).toEqual([{ index: 0, reason: expect.stringMatching(/^episode contains U\+0000/) }]);
    expect((await as(t, u).get(`/api/2/episodes/${u.name}.json`)).body.actions).toHaveLength(1);
  });

  test('gpodder and Nextcloud: actions that all name one device holding U+0000 are skipped, the report has no device', async () => {
    const sent = {
      podcast: 'https://good.example/feed',
      episode: 'https://good.example/2.mp3',
      action: 'new',
      timestamp: '2026-01-01T00:00:00',
      device: NUL,
    };
    const v = await t.user('device');
    for (const path of [`/api/2/episodes/${v.name}.json`, '/index.php/apps/gpoddersync/episode_action/create']) {
      const r = await as(t, v).post(path, [sent]);
      expect(r.status).toBe(200);
      expect(r.body.skipped).toEqual([{ index: 0, reason: expect.stringMatching(/U\+0000/) }]);
    }
    const reports = await t.db.query<{ device_id: string | null }>(
      "SELECT device_id FROM sync_reports WHERE user_id = $1 AND kind = 'episode actions'",
      [v.id],
    );
    expect(reports.rows.map((r) => r.device_id)).toEqual([null, null]);
  });

  test('gpodder: a query parameter or a path segment is a 400; a device caption too', async () => {
    expectError(await as(t, u).get(`/api/2/episodes/${u.name}.json?device=%00`), 400, /^Invalid device: /);
    expectError(await as(t, u).get(`/api/2/episodes/${u.name}.json?podcast=a%00`), 400);
    expectError(await as(t, u).post(`/api/2/devices/${u.name}/a%00b.json`, {}), 400);
    expectError(await as(t, u).post(`/api/2/devices/${u.name}/tablet.json`, { caption: `x${NUL}` }), 400);
    const poll = await request(t.app).post('/index.php/login/v2/poll').type('form').send(`token=a${NUL}`);
    expectError(poll, 404);
  });

  test('web: a form field or a search holding U+0000 is the form again with a 400', async () => {
    const { agent, csrf } = await signedInAgent(t.app, u.name, u.password);
    const add = await agent
      .post('/web/subscriptions')
      .type('form')
      .send({ _csrf: csrf, feed_url: `https://w.example/${NUL}` });
    expect(add.status).toBe(400);
    expect(add.text).toContain('cannot be stored');
    expect((await agent.get('/web/subscriptions?q=%00')).status).toBe(400);
    const signIn = await request(t.app)
      .post('/web/sign-in')
      .type('form')
      .send({ username: `a${NUL}`, password: 'x' });
    expect(signIn.status).toBe(400);
  });
});

describe("a third party's text: the character removed, the rest kept", () => {
  test('an archive with U+0000 and a lone surrogate in its strings imports whole, without them', async () => {
    const v = await t.user('archive');
    const document = JSON.stringify({
      format: 'castsync-archive',
      version: 1,
      exported_at: '2026-11-01T00:00:00.000Z',
      user: 'someone',
      devices: [{ id: 'kitchen', caption: `Kit${NUL}chen`, type: 'other' }],
      subscriptions: [
        {
          feed_url: `https://archive.example/${NUL}feed`,
          guid: '00000000-0000-4000-8000-000000000046',
          is_subscribed: true,
          subscription_changed: '2026-11-01T00:00:00.000Z',
          guid_changed: null,
          other_urls: [],
          earlier_guids: [],
        },
      ],
      episode_actions: [
        { podcast: 'https://archive.example/feed', episode: `https://archive.example/1.mp3\ud800`, action: 'new' },
      ],
    });
    const options = {
      policy: { allowPrivate: true, allowCidrs: [] },
      limits: { timeoutMs: 5000, maxBytes: 1 << 20, totalMs: 60_000, totalBytes: 1 << 24 },
    };
    const summary = await runImport(
      t.db,
      v.id,
      { source: 'archive', document },
      { ...options, dryRun: false, progress: () => undefined },
    );
    expect(summary.feeds).toMatchObject({ added: 1, refused: [] });
    expect(summary.actions).toMatchObject({ added: 1 });
    expect((await as(t, v).get(`/subscriptions/${v.name}.json`)).body).toEqual(['https://archive.example/feed']);
    const devices = (await as(t, v).get(`/api/2/devices/${v.name}.json`)).body as { caption: string }[];
    expect(devices.map((d) => d.caption)).toEqual(['Kitchen']);
  });

  test("another server's answers with U+0000 import whole, without it", async () => {
    const v = await t.user('remote');
    const answer = (body: string) => (_req: unknown, res: import('node:http').ServerResponse) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    const remote = await feedServer({
      '/index.php/apps/gpoddersync/subscriptions': answer('{"add":["https://remote.example/\\u0000feed"],"remove":[]}'),
      '/index.php/apps/gpoddersync/episode_action': answer(
        '{"actions":[{"podcast":"https://remote.example/feed","episode":"https://remote.example/1.mp3\\u0000","action":"new"}]}',
      ),
    });
    try {
      const from = { source: 'nextcloud' as const, serverUrl: remote.url(''), remoteUser: 'me', password: 'pw' };
      const options = {
        policy: { allowPrivate: true, allowCidrs: [] },
        limits: { timeoutMs: 5000, maxBytes: 1 << 20, totalMs: 60_000, totalBytes: 1 << 24 },
      };
      const summary = await runImport(t.db, v.id, from, { ...options, dryRun: false, progress: () => undefined });
      expect(summary.actions).toMatchObject({ added: 1 });
      expect((await as(t, v).get(`/subscriptions/${v.name}.json`)).body).toEqual(['https://remote.example/feed']);
    } finally {
      await remote.close();
    }
  });

  test('an OPML upload with U+0000 in a title and a URL subscribes to the feed without it', async () => {
    const v = await t.user('opml');
    const opml = `<opml version="2.0"><body><outline text="T${NUL}itle" xmlUrl="https://opml.example/${NUL}feed"/></body></opml>`;
    const r = await request(t.app)
      .post('/v1/subscriptions.opml')
      .set('Authorization', v.basic)
      .type('text/x-opml')
      .send(opml);
    expect(r.status).toBe(200);
    expect(r.body.success.map((x: { feed_url: string }) => x.feed_url)).toEqual(['https://opml.example/feed']);
  });
});

describe('a body of the wrong shape', () => {
  test.each([
    '/api/2/episodes/{user}.json',
    '/index.php/apps/gpoddersync/episode_action/create',
    '/apps/gpoddersync/episode_action/create',
    '/api/2/subscriptions/{user}/phone.json',
    '/index.php/apps/gpoddersync/subscription_change/create',
    '/api/2/devices/{user}/phone.json',
    '/api/2/sync-devices/{user}.json',
  ])('%s: null, a number, a string, an object for a list: 400 with {code, message}', async (template) => {
    const path = template.replace('{user}', u.name);
    const bodies = ['null', '42', '"text"', ...(template.includes('episode') ? ['{"podcast":"x"}'] : ['[]'])];
    for (const body of bodies) expectError(await json(path, body), 400);
  });

  test('an empty body is an empty batch of episode actions, as the contract says, not a wrong shape', async () => {
    const r = await request(t.app).post(`/api/2/episodes/${u.name}.json`).set('Authorization', u.basic);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ timestamp: expect.any(Number), update_urls: [] });
  });
});

describe('a refused input in the log', () => {
  test('is a warning with the reason, never an error with a stack', async () => {
    captured.lines.length = 0;
    await request(t.app)
      .post('/v1/auth/login')
      .send({ username: `a${NUL}`, password: 'whatever1' });
    await json(`/api/2/episodes/${u.name}.json`, 'null');
    const lines = captured.lines.filter((l) => l.req !== undefined);
    expect(lines.map((l) => [l.level, l.status])).toEqual([
      [40, 405],
      [40, 400],
    ]);
    expect(lines[0]!.refused).toMatch(/username: contains U\+0000/);
    expect(lines[1]!.refused).toMatch(/array/);
    expect(captured.raw.join('\n')).not.toMatch(/"stack"|"level":50/);
  });
});

describe('JSON nested 100,000 deep (about 200 KB, under every size limit)', () => {
  const DEPTH = 100_000;
  const deep = '['.repeat(DEPTH) + ']'.repeat(DEPTH);
  const action = {
    type: 'episode',
    action: 'played',
    action_id: '00000000-0000-4000-8000-000000000051',
    occurred_at: '2026-01-01T00:00:00Z',
    data: { enclosure_url: 'https://deep.example/1.mp3', more: 0 },
  };
  const bodies: [string, string][] = [
    ['arrays in arrays', deep],
    ['objects in objects', '{"a":'.repeat(DEPTH) + '1' + '}'.repeat(DEPTH)],
    // A sync draft action whose data holds the deep value was a 500 once (a check by recursion).
    ['a deep value in a valid action', JSON.stringify({ requests: [action] }).replace('"more":0', `"more":${deep}`)],
  ];
  type Operation = { requestBody?: { content: Record<string, unknown> } };
  const doc = openApiDocument() as { paths: Record<string, Record<string, Operation>> };
  /** The door's refusal of a JSON body: /v1 the contract's 405, the sync draft, gpodder and Nextcloud 400. */
  const refusal = (path: string) => (path.startsWith('/v1/') ? 405 : 400);
  const web = (path: string) => path === '/' || /^\/(web|login\/flow)\//.test(path);
  const filled = (route: string) =>
    route
      .replace('{user}', u.name)
      .replace('{device}', 'phone')
      .replace('{format}', 'json')
      .replace(/\{\w+\}/g, '00000000-0000-4000-8000-000000000051');

  test.each(bodies)(
    "%s: every route that takes JSON answers its door's refusal, every other write no 5xx",
    async (_shape, body) => {
      const { cookie } = await signedInAgent(t.app, u.name, u.password);
      const writes = servedRoutes(t.app).filter((r) => /^(post|put|patch) /.test(r));
      expect(writes.length).toBeGreaterThan(40);
      const answers: string[] = [];
      for (const [method, route] of writes.map((r) => r.split(' ') as [string, string])) {
        const content = doc.paths[route]?.[method]?.requestBody?.content ?? {};
        // The simple API's upload is JSON when the path says so, read as text by its route.
        const viaText = route.includes('{format}');
        const takesJson = 'application/json' in content || viaText;
        const r = await request(t.app)
          [method as 'post'](filled(route))
          .set(web(route) ? 'Cookie' : 'Authorization', web(route) ? cookie : u.basic)
          .set('Content-Type', 'application/json')
          .send(body);
        const expected = takesJson ? refusal(route) : 'no 5xx';
        const got = takesJson ? r.status : r.status < 500 ? 'no 5xx' : r.status;
        answers.push(`${method} ${route}: ${got}`);
        expect(`${method} ${route}: ${got}`).toBe(`${method} ${route}: ${expected}`);
        if (takesJson && !viaText) expect(r.body.message).toMatch(/The body is nested more than 64 deep$/);
        if (!takesJson && web(route)) expect(r.headers['content-type']).toMatch(/^text\/html/);
      }
      // Every JSON door was reached.
      for (const door of ['post /v1/', 'post /api/v1/sync', 'post /api/2/', 'post /index.php/apps/gpoddersync/'])
        expect(answers.some((a) => a.startsWith(door) && !a.endsWith('no 5xx'))).toBe(true);
      expect((await as(t, u).get('/v1/subscriptions')).status).toBe(200);
    },
  );

  test('the web page: an archive or a gpodder.net archive with JSON this deep ends its import saying so', async () => {
    const { agent, csrf } = await signedInAgent(t.app, u.name, u.password);
    const archive = `{"format":"castsync-archive","version":1,"devices":${deep}}`;
    const tar = writeArchive({ 'meta.json': deep }, { compress: false });
    for (const [path, file, name, says] of [
      ['/web/import/archive', Buffer.from(archive), 'archive.json', 'nested more than 64 deep'],
      ['/web/import/gpodder-archive', fs.readFileSync(tar), 'alice.tar', 'nested more than 64 deep'],
    ] as const) {
      // The upload is stored and read by the import's job (docs/moving.md): the page then says why it failed.
      const r = await agent.post(path).field('_csrf', csrf).field('action', 'import').attach('archive', file, name);
      expect(r.status).toBe(303);
      const queued = await t.db.query<{ id: number }>(
        `SELECT (j.payload->>'importId')::int AS id FROM graphile_worker._private_jobs j
           JOIN graphile_worker._private_tasks t ON t.id = j.task_id WHERE t.identifier = 'import'`,
      );
      for (const { id } of queued.rows) {
        await runImportJob(
          {
            db: t.db,
            logger: pino({ level: 'silent' }),
            policy: { allowPrivate: true, allowCidrs: [] },
            limits: { timeoutMs: 5000, maxBytes: 1 << 20, totalMs: 60_000, totalBytes: 1 << 24 },
            archive: ARCHIVE_LIMITS,
          },
          id,
        );
      }
      await t.db.query('DELETE FROM graphile_worker._private_jobs');
      const page = await agent.get('/web/moving');
      expect(page.status).toBe(200);
      expect(page.text).toContain(says);
    }
  });
});
