import request from 'supertest';
import { as, testApp, type TestApp } from '../helpers/app';
import { capturedLogger, parseStrictJson } from '../helpers/logs';

let t: TestApp;
const { logger, raw } = capturedLogger();
beforeAll(async () => {
  t = await testApp({}, logger);
});
afterAll(() => t.close());

/** The finished-request lines written since `from`, parsed with a parser that refuses a repeated key. */
const finished = (from: number) =>
  raw
    .slice(from)
    .map((l) => parseStrictJson(l) as Record<string, unknown>)
    .filter((l) => l.msg === 'request completed' || l.msg === 'request errored');

test('the strict parser refuses a repeated key (the defect it guards against)', () => {
  expect(() => parseStrictJson('{"route":"unmatched","status":200,"route":"/x","status":405}')).toThrow(/duplicate/);
  expect(parseStrictJson('{"a":{"b":[1,"x\\"y",null]},"c":true}')).toEqual({ a: { b: [1, 'x"y', null] }, c: true });
});

test('each request line has one route, one status and one user id, the right ones; metrics agree', async () => {
  const u = await t.user();
  const from = raw.length;
  expect((await as(t, u).get('/v1/subscriptions')).status).toBe(200);
  expect((await request(t.app).get('/v1/subscriptions')).status).toBe(401);
  const wrong = await request(t.app).get('/v1/auth/login');
  expect(wrong.status).toBe(405);
  expect(wrong.headers.allow).toBe('POST');
  expect(wrong.body).toEqual({ code: '405', message: 'Method not allowed' });
  // A statement that fails for a reason that is not the database being away: a 500.
  await t.db.query('ALTER TABLE deletions RENAME TO deletions_away');
  try {
    const r = await as(t, u).get('/v1/deletions/1');
    expect(r.status).toBe(500);
  } finally {
    await t.db.query('ALTER TABLE deletions_away RENAME TO deletions');
  }
  const lines = finished(from);
  expect(lines.map((l) => [l.route, l.status, l.userId])).toEqual([
    ['/v1/subscriptions', 200, u.id],
    ['/v1/subscriptions', 401, undefined],
    ['/v1/auth/login', 405, undefined],
    ['/v1/deletions/:id', 500, u.id],
  ]);
  // The 500 is logged once, on its request's line, with the error.
  const errors = raw.slice(from).filter((l) => l.includes('deletions_away') || l.includes('"level":50'));
  expect(errors).toHaveLength(1);
  expect(lines[3]).toMatchObject({ level: 50, err: { type: 'DatabaseError' } });

  const metrics = (await request(t.app).get('/metrics')).text;
  expect(metrics).toMatch(
    /http_request_duration_seconds_count\{method="GET",route="\/v1\/deletions\/:id",status="500"\} 1/,
  );
  expect(metrics).toMatch(
    /http_request_duration_seconds_count\{method="GET",route="\/v1\/auth\/login",status="405"\} 1/,
  );
  expect(metrics).toMatch(
    /http_request_duration_seconds_count\{method="GET",route="\/v1\/subscriptions",status="401"\} 1/,
  );
  expect(metrics).not.toMatch(/route="\/deletions\/:id"/);
});
