import pg from 'pg';
import { LIST_PAGE, LIST_PAGE_SINCE } from '../../src/subscriptions/list-repo';
import { as, testApp, type TestApp } from '../helpers/app';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

const counts = async (userId: number) => {
  const r = await t.db.query<{ kept: number; real: number }>(
    `SELECT u.record_count AS kept, (SELECT count(*) FROM subscriptions s WHERE s.user_id = u.id) AS real
       FROM users u WHERE u.id = $1`,
    [userId],
  );
  return r.rows[0]!;
};

test("the record count kept on the user's row follows every kind of write, and is GET's total", async () => {
  const u = await t.user();
  const api = as(t, u);
  const feeds = (names: string[]) => ({
    subscriptions: names.map((n) => ({ feed_url: `https://count.example/${n}` })),
  });
  const check = async (expected: number) => {
    expect(await counts(u.id)).toEqual({ kept: expected, real: expected });
    expect((await api.get('/v1/subscriptions')).body.total).toBe(expected);
  };
  await check(0);
  const first = await api.post('/v1/subscriptions', feeds(['a', 'b', 'c']));
  await check(3);
  await api.post('/v1/subscriptions', feeds(['a', 'd', 'd', 'b'])); // known ones, and a new one twice
  await check(4);
  const [a, b] = first.body.success as { guid: string }[];
  // Two records become one when one takes the other's guid.
  expect((await api.patch(`/v1/subscriptions/${a!.guid}`, { new_guid: b!.guid })).status).toBe(200);
  await check(3);
  expect((await api.del(`/v1/subscriptions/${b!.guid}`)).status).toBe(202);
  await check(3); // a deleted record is still a record (clients learn of it by `since`)
  await api.post('/v1/subscriptions', feeds(['e']));
  await check(4);
});

describe('the list statements cost what the page costs, not what the user has', () => {
  let userId: number;
  let client: pg.Client;
  beforeAll(async () => {
    userId = (await t.user()).id;
    // 30,000 records written over time by many users: each of this user's records on its own table page.
    await t.db.query(
      `INSERT INTO subscriptions (user_id, guid, feed_url, url_hash, subscription_changed)
       SELECT CASE WHEN g % 4 = 0 THEN $1 ELSE -g END, gen_random_uuid(), 'https://big.example/' || g,
              md5(g::text)::uuid, now() - interval '1 day' + g * interval '1 millisecond'
         FROM generate_series(1, 120000) g`,
      [userId],
    );
    await t.db.query(`UPDATE users SET record_count = 30000 WHERE id = $1`, [userId]);
    await t.db.query('VACUUM ANALYZE subscriptions');
    client = new pg.Client({ connectionString: t.url });
    await client.connect();
  });
  afterAll(() => client.end());

  type PlanNode = {
    'Node Type': string;
    'Index Name'?: string;
    'Index Cond'?: string;
    Plans?: PlanNode[];
    'Shared Hit Blocks'?: number;
  };
  const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];

  test('GET without since reads a few dozen buffers for a user with 30,000 records', async () => {
    const r = await client.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${LIST_PAGE}`, [userId, 50, 0]);
    const plan = (r.rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0]!.Plan;
    const buffers = plan['Shared Hit Blocks'] ?? 0;
    // Counting the records (an index-only scan over 30,000 entries) alone read about 80.
    expect(buffers).toBeLessThan(40);
  });

  test("GET since: the prepared statement's generic plan reads the changes from the (user_id, changed) index", async () => {
    await client.query('SET plan_cache_mode = force_generic_plan');
    await client.query(`PREPARE since_page (bigint, timestamptz, bigint, bigint) AS ${LIST_PAGE_SINCE}`);
    try {
      // EXPLAIN EXECUTE takes no bind parameters: the values are written in (both are made here).
      const args = `${userId}, '${new Date(Date.now() - 3_600_000).toISOString()}', 50, 0`;
      const r = await client.query(`EXPLAIN (FORMAT JSON) EXECUTE since_page(${args})`);
      const scans = nodes((r.rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0]!.Plan).filter((n) =>
        n['Node Type'].includes('Scan'),
      );
      const onSubscriptions = scans.filter((n) => n['Index Name']?.startsWith('subscriptions_'));
      expect(onSubscriptions.map((n) => [n['Node Type'], n['Index Name']])).toEqual(
        expect.arrayContaining([['Index Only Scan', 'subscriptions_user_changed_idx']]),
      );
      // The primary key is only probed for the page's rows, never walked over the user's records.
      expect(scans.filter((n) => n['Node Type'] === 'Seq Scan')).toEqual([]);
      const pkey = onSubscriptions.filter((n) => n['Index Name'] === 'subscriptions_pkey');
      expect(pkey.map((n) => n['Index Cond'])).toEqual(pkey.map(() => expect.stringMatching(/\bid = /)));
      const walked = await client.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE since_page(${args})`);
      expect((walked.rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0]!.Plan['Shared Hit Blocks']).toBeLessThan(40);
    } finally {
      await client.query('DEALLOCATE since_page');
      await client.query('RESET plan_cache_mode');
    }
  });
});
