import request from 'supertest';
import { z } from 'zod';
import {
  deletionAccepted,
  deletionStatusResponse,
  listResponse,
  patchResponse,
  postResponse,
  subscriptionRecord,
} from '../../src/opa/schemas';
import { sessionResponse } from '../../src/opa/auth-schemas';
import { capabilitiesResponse } from '../../src/opa/router';
import { errorBody } from '../../src/http/openapi';
import { as, expectError, testApp, type TestApp } from '../helpers/app';
import { capturedLogger } from '../helpers/logs';
import { servedRoutes } from '../helpers/routes';
import { VERSION } from '../../src/version';

let t: TestApp;
const { logger, lines } = capturedLogger();
beforeAll(async () => {
  t = await testApp({}, logger);
});
afterAll(() => t.close());

describe('OpenAPI document and docs', () => {
  test('GET /openapi.json is OpenAPI 3.1 with the auth schemes of /v1 and of gpodder', async () => {
    const r = await request(t.app).get('/openapi.json');
    expect(r.status).toBe(200);
    expect(r.body.openapi).toBe('3.1.0');
    expect(Object.keys(r.body.components.securitySchemes).sort()).toEqual(['basic', 'bearer', 'gpodderSession']);
    expect(r.body.components.schemas.Error).toBeDefined();
  });

  test('every route the app serves is in the document, and every documented route is served', async () => {
    const doc = (await request(t.app).get('/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const documented = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m} ${p}`));
    // The web page's pages and forms, and its service worker, are for people, not an API (docs/web.md);
    // the approval page that apps open is documented.
    const page = (r: string) =>
      r === 'get /' || r === 'get /sw.js' || / \/web\//.test(r) || r === 'post /login/flow/{code}';
    const all = servedRoutes(t.app);
    expect(all).toEqual(expect.arrayContaining(['get /', 'get /web/subscriptions', 'post /login/flow/{code}']));
    const served = all.filter((r) => !page(r));
    expect(served.length).toBeGreaterThan(10);
    expect(served.filter((r) => !documented.includes(r))).toEqual([]);
    expect(documented.filter((r) => !served.includes(r))).toEqual([]);
  });

  test('the documented parameters and error responses are there', async () => {
    const doc = (await request(t.app).get('/openapi.json')).body;
    const list = doc.paths['/v1/subscriptions'].get;
    expect(list.parameters.map((p: { name: string }) => p.name).sort()).toEqual(['page', 'per_page', 'since']);
    expect(Object.keys(list.responses)).toEqual(expect.arrayContaining(['200', '400', '401']));
    expect(Object.keys(doc.paths['/v1/subscriptions'].post.responses)).toEqual(
      expect.arrayContaining(['200', '401', '405', '413', '415']),
    );
    expect(Object.keys(doc.paths['/v1/subscriptions/{guid}'].get.responses)).toEqual(
      expect.arrayContaining(['200', '404', '405', '410']),
    );
  });

  test('/docs is served from local assets and works under the Content-Security-Policy', async () => {
    const page = await request(t.app).get('/docs/');
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toMatch(/script-src 'self'/);
    const assets = [...page.text.matchAll(/(?:src|href)=["']([^"']+)["']/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThan(2);
    for (const a of assets) {
      expect(a).not.toMatch(/^(https?:)?\/\//);
      const r = await request(t.app).get(new URL(a, 'http://x/docs/').pathname);
      expect(r.status).toBe(200);
    }
    expect(page.text).not.toMatch(/<script>[^<]/); // no inline script, which the CSP would block
  });

  test('responses of the main endpoints validate against their documented schemas', async () => {
    const u = await t.user('schema');
    const c = as(t, u);
    const strict = <S extends z.ZodObject>(s: S) => s.strict();
    const check = (schema: z.ZodType, body: unknown) => expect(schema.safeParse(body).error).toBeUndefined();
    const post = await c.post('/v1/subscriptions', {
      subscriptions: [{ feed_url: 'https://schema.example/a.xml' }, { feed_url: 'bad' }],
    });
    check(strict(postResponse), post.body);
    const g = post.body.success[0].guid;
    check(strict(listResponse), (await c.get('/v1/subscriptions?per_page=1')).body);
    check(strict(subscriptionRecord), (await c.get(`/v1/subscriptions/${g}`)).body);
    check(strict(patchResponse), (await c.patch(`/v1/subscriptions/${g}`, { is_subscribed: false })).body);
    const del = await c.del(`/v1/subscriptions/${g}`);
    check(strict(deletionAccepted), del.body);
    check(strict(deletionStatusResponse), (await c.get(`/v1/deletions/${del.body.deletion_id}`)).body);
    check(
      strict(sessionResponse),
      (await request(t.app).post('/v1/auth/login').send({ username: u.name, password: u.password })).body,
    );
    check(strict(capabilitiesResponse), (await request(t.app).get('/v1/capabilities')).body);
    for (const r of [
      await request(t.app).get('/v1/subscriptions'),
      await c.get('/v1/subscriptions?page=0'),
      await c.get('/v1/nope'),
      await c.post('/v1/subscriptions', {}),
    ]) {
      check(strict(errorBody), r.body);
    }
  });
});

describe('health, readiness, metrics', () => {
  test('/healthz answers without touching the database', async () => {
    expect((await request(t.app).get('/healthz')).body).toEqual({ status: 'ok', version: VERSION });
  });

  test('/readyz: 200 while the database answers, 503 while draining', async () => {
    expect((await request(t.app).get('/readyz')).status).toBe(200);
    t.state.draining = true;
    try {
      expectError(await request(t.app).get('/readyz'), 503);
    } finally {
      t.state.draining = false;
    }
  });

  test('/metrics: Prometheus text with route templates, never raw paths; pool and queue gauges', async () => {
    const u = await t.user('metric');
    const guid = '4a7c3d2e-1111-4222-8333-444455556666';
    await as(t, u).get(`/v1/subscriptions/${guid}`);
    await as(t, u).get('/v1/subscriptions');
    const text = (await request(t.app).get('/metrics')).text;
    expect(text).toMatch(/^# TYPE http_request_duration_seconds histogram$/m);
    expect(text).toContain('route="/v1/subscriptions/:guid"');
    expect(text).toMatch(
      /http_request_duration_seconds_count\{method="GET",route="\/v1\/subscriptions",status="200"\} \d+/,
    );
    expect(text).not.toContain(guid);
    expect(text).toMatch(/^castsync_db_pool_connections\{state="total"\} \d+/m);
    expect(text).toMatch(/^castsync_jobs_queued \d+/m);
    expect(text).toMatch(/^castsync_deletions_pending \d+/m);
    expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
  });
});

test('with METRICS_TOKEN, /metrics answers only its bearer token: 401 with a challenge otherwise', async () => {
  const token = 'metrics-token-0123456789abcdef';
  const guarded = await testApp({ METRICS_TOKEN: token });
  try {
    const refused = [undefined, 'Bearer wrong-token', `Basic ${Buffer.from(`x:${token}`).toString('base64')}`];
    for (const authorization of refused) {
      const req = request(guarded.app).get('/metrics');
      const r = authorization === undefined ? await req : await req.set('Authorization', authorization);
      expectError(r, 401);
      expect(r.headers['www-authenticate']).toBe('Bearer realm="metrics"');
      expect(r.text).not.toContain('castsync_');
    }
    const ok = await request(guarded.app).get('/metrics').set('Authorization', `Bearer ${token}`);
    expect(ok.status).toBe(200);
    expect(ok.text).toMatch(/^castsync_jobs_queued \d+/m);
    expect((await request(guarded.app).get('/healthz')).status).toBe(200);
  } finally {
    await guarded.close();
  }
});

describe('HTTP conventions', () => {
  test('an unknown path is 404 with the error body', async () => {
    const u = await t.user('lost');
    expectError(await as(t, u).get('/v1/nope'), 404, 'Resource not found');
    expectError(await request(t.app).get('/nowhere'), 404, 'Resource not found');
  });

  test('X-Request-Id is generated, or echoed when the client sent a sane one', async () => {
    const a = await request(t.app).get('/v1/capabilities');
    expect(a.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const b = await request(t.app).get('/v1/capabilities').set('X-Request-Id', 'client-req-42');
    expect(b.headers['x-request-id']).toBe('client-req-42');
    const c = await request(t.app).get('/v1/capabilities').set('X-Request-Id', 'bad id with spaces <script>');
    expect(c.headers['x-request-id']).not.toContain(' ');
  });

  test('helmet headers are set', async () => {
    const r = await request(t.app).get('/v1/capabilities');
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    expect(r.headers['x-powered-by']).toBeUndefined();
  });

  test('a Client-ID header is accepted and not required', async () => {
    const u = await t.user('client');
    const r = await as(t, u).get('/v1/subscriptions').set('Client-ID', '9c5b94b1-35ad-49bb-b118-8e8fc24abf80');
    expect(r.status).toBe(200);
  });

  test('one log line per request with route, status, duration and user id, and never a credential', async () => {
    const u = await t.user('logged');
    const session = (await request(t.app).post('/v1/auth/login').send({ username: u.name, password: u.password })).body;
    lines.length = 0;
    await as(t, u).get('/v1/subscriptions').set('Cookie', 'session=cookie-secret');
    await as(t, `Bearer ${session.access_token}`).post('/v1/subscriptions', { subscriptions: [] });
    await request(t.app).post('/v1/auth/refresh').send({ refresh_token: session.refresh_token });
    await request(t.app).post('/v1/auth/login').send({ username: u.name, password: 'the-wrong-password' });
    const done = lines.filter((l) => l.msg === 'request completed');
    expect(done).toHaveLength(4);
    expect(done[0]).toMatchObject({
      route: '/v1/subscriptions',
      status: 200,
      userId: u.id,
      responseTime: expect.any(Number),
    });
    expect(done[0]!.req).toEqual({ id: expect.any(String), method: 'GET', url: '/v1/subscriptions' });
    const all = JSON.stringify(lines);
    for (const secret of [
      u.password,
      session.access_token,
      session.refresh_token,
      'cookie-secret',
      'the-wrong-password',
      u.basic,
    ]) {
      expect(all).not.toContain(secret);
    }
  });
});
