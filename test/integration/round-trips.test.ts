import pg from 'pg';
import { as, testApp, type TestApp } from '../helpers/app';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

/** Statements sent to PostgreSQL while fn runs. */
async function statements(fn: () => Promise<unknown>): Promise<number> {
  const original = pg.Client.prototype.query;
  let n = 0;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    n++;
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    await fn();
  } finally {
    pg.Client.prototype.query = original;
  }
  return n;
}

const feeds = (tag: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({ feed_url: `https://rt.example/${tag}/${i}.xml` }));

describe('a POST costs a constant number of statements, whatever its size', () => {
  test('new feeds: one statement for 1, 100 or 1,000', async () => {
    const c = as(t, await t.user('rt'));
    await c.get('/v1/subscriptions'); // authenticated once, so the credential is cached
    const counts = [];
    for (const n of [1, 100, 1000]) {
      counts.push(
        await statements(() => c.post('/v1/subscriptions', { subscriptions: feeds(`new${n}`, n) }).expect(200)),
      );
    }
    expect(counts).toEqual([1, 1, 1]);
  });

  test('feeds the user has: three statements for 1, 100 or 1,000', async () => {
    const c = as(t, await t.user('rt'));
    await c.get('/v1/subscriptions');
    const counts = [];
    for (const n of [1, 100, 1000]) {
      await c.post('/v1/subscriptions', { subscriptions: feeds(`old${n}`, n) }).expect(200);
      counts.push(
        await statements(() => c.post('/v1/subscriptions', { subscriptions: feeds(`old${n}`, n) }).expect(200)),
      );
    }
    expect(counts).toEqual([3, 3, 3]);
  });
});
