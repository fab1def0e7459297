import pg from 'pg';
import * as episodes from '../../src/episodes/repo';
import * as state from '../../src/episodes/state-repo';
import * as feeds from '../../src/feeds/repo';
import * as records from '../../src/subscriptions/record-repo';
import * as lists from '../../src/subscriptions/list-repo';
import * as subscriptions from '../../src/subscriptions/repo';
import * as sync from '../../src/sync/repo';
import type { Queryable } from '../../src/db/pool';
import { testApp, type TestApp } from '../helpers/app';

// The hot statements' plans on tables of the big shape (many users, each with a small part of the rows,
// and a few users with a long history): every statement a request (or the fetcher, per feed) runs must
// find its rows by an index, never by reading a whole big table, whether PostgreSQL plans it for the
// values sent (a custom plan) or once for any values (the generic plan it may settle on for a prepared
// statement). docs/performance.md, "At gpodder.net's size", has the same plans on 7 million actions.

type PlanNode = { 'Node Type': string; 'Relation Name'?: string; Filter?: string; Plans?: PlanNode[] };
const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];

const BIG_TABLES = [
  'users',
  'subscriptions',
  'subscription_guids',
  'subscription_urls',
  'episode_actions',
  'episode_latest',
  'feeds',
  'feed_items',
];

let t: TestApp;
let client: pg.Client;
/** A user among many, one with a long history, and one of the feeds most of them have. */
let user: number;
let historyUser: number;
let popularHash: string;
/** Episodes of the user with a long history, for the state read. */
let someEpisodes: string[];

beforeAll(async () => {
  t = await testApp();
  client = new pg.Client({ connectionString: t.url });
  await client.connect();
  // 5,000 users with 30 records each, feeds drawn by Zipf's law over 20,000, one record in ten with an
  // earlier guid and one in ten with another URL; 150,000 actions spread over them and 8,000 for one user;
  // the feeds with 10 items each.
  await client.query(`
    INSERT INTO users (username, password_hash) SELECT 'u' || g, 'x' FROM generate_series(1, 5000) g;
    INSERT INTO subscriptions (user_id, guid, feed_url, url_hash, subscription_changed)
    SELECT u.id, gen_random_uuid(), f.url, md5(f.url)::uuid, now() - g * interval '1 hour'
      FROM users u CROSS JOIN generate_series(1, 30) g
     CROSS JOIN LATERAL (SELECT 'https://f.example/' || floor(exp(random() * ln(20000)) + 0 * g * u.id)::int || '.xml' AS url) f
    ON CONFLICT DO NOTHING;
    UPDATE users u SET record_count = (SELECT count(*) FROM subscriptions s WHERE s.user_id = u.id);
    INSERT INTO subscription_guids (user_id, guid, subscription_id, replaced_at)
    SELECT user_id, gen_random_uuid(), id, now() FROM subscriptions WHERE id % 10 = 0;
    INSERT INTO subscription_urls (user_id, url_hash, subscription_id, feed_url)
    SELECT user_id, md5(feed_url || '?old')::uuid, id, feed_url || '?old' FROM subscriptions WHERE id % 10 = 5;
    INSERT INTO episode_actions (user_id, podcast_url, podcast_hash, subscription_id, episode_url, episode_hash,
                                 episode_guid, action, at, position, device_id, changed, json)
    SELECT s.user_id, s.feed_url, s.url_hash, s.id, s.feed_url || '/' || g, md5(s.feed_url || '/' || g)::uuid,
           'guid-' || g, (ARRAY['download', 'play', 'delete'])[1 + g % 3], now() - g * interval '1 day', g,
           'phone', now() - g * interval '1 day', '{}'
      FROM subscriptions s CROSS JOIN generate_series(1, CASE WHEN s.user_id = (SELECT id FROM users WHERE username = 'u1') THEN 270 ELSE 1 END) g;
    INSERT INTO episode_latest (user_id, episode_hash, action, action_id, at, changed)
    SELECT DISTINCT ON (user_id, episode_hash, action) user_id, episode_hash, action, id, at, changed
      FROM episode_actions ORDER BY user_id, episode_hash, action, at DESC, id DESC;
    INSERT INTO feeds (url_hash, feed_url, next_fetch_at)
    SELECT DISTINCT url_hash, feed_url, now() + interval '1 day' FROM subscriptions;
    INSERT INTO feed_items (feed_hash, item_key, guid, enclosure_url, enclosure_hash, ord)
    SELECT f.url_hash, 'guid-' || k, 'guid-' || k, f.feed_url || '/' || k, md5(f.feed_url || '/' || k)::uuid, k
      FROM feeds f CROSS JOIN generate_series(1, 10) k;
    ANALYZE`);
  const ids = await client.query<{ id: number }>(`SELECT id FROM users WHERE username IN ('u2', 'u1') ORDER BY id`);
  [historyUser, user] = ids.rows.map((r) => r.id) as [number, number];
  someEpisodes = (
    await client.query<{ h: string }>(
      `SELECT DISTINCT episode_hash::text AS h FROM episode_latest WHERE user_id = $1 LIMIT 100`,
      [historyUser],
    )
  ).rows.map((r) => r.h);
  popularHash = (
    await client.query<{ h: string }>(
      `SELECT url_hash::text AS h FROM subscriptions GROUP BY url_hash ORDER BY count(*) DESC LIMIT 1`,
    )
  ).rows[0]!.h;
}, 60_000);

afterAll(async () => {
  await client.end();
  await t.close();
});

type Explained = { text: string; custom: PlanNode; generic: PlanNode | undefined };

/**
 * The statements `run` sends, each explained as it would run with its values and (when it has parameters)
 * as the generic plan, then run for real, inside a transaction that is rolled back.
 */
async function explained(run: (db: Queryable) => Promise<unknown>): Promise<Explained[]> {
  const out: Explained[] = [];
  const plan = async (sql: string, values?: unknown[]) =>
    ((await client.query(sql, values)).rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0]!.Plan;
  const db = {
    query: async (config: string | { text: string; values?: unknown[] }, given?: unknown[]) => {
      const { text, values } = typeof config === 'string' ? { text: config, values: given } : config;
      const custom = await plan(`EXPLAIN (FORMAT JSON) ${text}`, values);
      const generic = values?.length ? await plan(`EXPLAIN (GENERIC_PLAN, FORMAT JSON) ${text}`) : undefined;
      out.push({ text, custom, generic });
      return client.query(text, values);
    },
  } as unknown as Queryable;
  await client.query('BEGIN');
  try {
    await run(db);
  } finally {
    await client.query('ROLLBACK');
  }
  return out;
}

/** The big tables a statement's plans read whole. */
const seqScans = (list: Explained[]) =>
  list.flatMap((e) =>
    [e.custom, e.generic]
      .flatMap((p) => (p ? nodes(p) : []))
      .filter((n) => n['Node Type'] === 'Seq Scan' && BIG_TABLES.includes(n['Relation Name'] ?? ''))
      .map((n) => `${n['Relation Name']} in: ${e.text.replace(/\s+/g, ' ').slice(0, 120)}`),
  );

const ago = (days: number) => new Date(Date.now() - days * 86_400_000);
const hex = (k: number) => k.toString(16).padStart(32, '0');
/** Subscribes of feeds by these guids and URL keys, as the sync draft reads them. */
const items = (guids: string[], hashes: string[]) =>
  guids.map((guid, i) => ({ guid, hash: hashes[i]!, feedUrl: `https://f.example/${i}`, key: '', explicitGuid: true }));
const action = (k: number): episodes.ActionWrite => ({
  podcastUrl: 'https://f.example/1.xml',
  podcastHash: hex(1),
  episodeUrl: `https://f.example/1.xml/new-${k}`,
  episodeHash: hex(1000 + k),
  guid: null,
  action: 'play',
  at: new Date(),
  started: 0,
  position: k,
  total: 100,
  device: 'phone',
});

const cases: [string, (db: Queryable) => Promise<unknown>][] = [
  ['GET /v1/subscriptions (a page)', (db) => lists.listPage(db, user, 50, 0)],
  ['GET /v1/subscriptions?since', (db) => lists.listPageSince(db, user, ago(2), 50, 0)],
  ['gpodder subscription pull', (db) => lists.changesSince(db, user, ago(2))],
  ['gpodder subscription pull, first sync', (db) => lists.changesSince(db, user, undefined)],
  [
    'gpodder subscription push (matching)',
    (db) => subscriptions.findMatches(db, user, [hex(1), hex(2)], [popularHash, hex(3)]),
  ],
  [
    'gpodder subscription push (new feeds)',
    (db) =>
      subscriptions.insertIfAllNew(db, user, [
        { guid: hex(7), feedUrl: 'https://new.example/a', urlHash: hex(8), guidChanged: false },
      ]),
  ],
  [
    'episode upload of 30',
    (db) =>
      episodes.insertActions(
        db,
        user,
        Array.from({ length: 30 }, (_, k) => action(k)),
      ),
  ],
  ['episode download since, a page', (db) => episodes.actionPage(db, user, {}, false, episodes.cursorAt(ago(3)), 500)],
  [
    'episode download since=0, a page of a long history',
    (db) => episodes.actionPage(db, historyUser, {}, false, episodes.cursorAt(undefined), 500),
  ],
  [
    'episode download, aggregated, a page',
    (db) => episodes.actionPage(db, user, {}, true, episodes.cursorAt(undefined), 500),
  ],
  [
    'GET /v1/episodes: the changed page',
    (db) => state.changedPage(db, user, { since: undefined, limit: 50, offset: 0 }),
  ],
  ['episode state: the one read', (db) => state.stateRows(db, historyUser, someEpisodes)],
  ['web: continue listening', (db) => state.recentlyPlayedItems(db, historyUser, 200)],
  ["web: a feed's episodes", (db) => state.feedItems(db, user, popularHash, { search: '', limit: 50, offset: 0 })],
  ['web: new episodes', (db) => state.newItems(db, user, { since: ago(30), limit: 50, offset: 0 })],
  ['web: one episode', (db) => state.item(db, user, '1')],
  ['archive: episode actions', (db) => episodes.actionsAfter(db, historyUser, undefined, 5000)],
  ['fetcher: the records of a fetched feed', (db) => records.liveRecordsWithUrl(db, popularHash, null)],
  ['fetcher: due feeds', (db) => feeds.claimDue(db, 16, 600)],
  ['fetcher: feeds scheduled too far ahead', (db) => feeds.dueWhenTooFar(db, 24 * 3600, 7 * 24 * 3600)],
  [
    "sync draft: the records a batch's subscribes name",
    (db) => sync.findMatches(db, user, items([hex(1), hex(2)], [popularHash, hex(3)])),
  ],
  ['sync draft: records by their sync ids', (db) => sync.bySyncIds(db, user, [hex(1), hex(2)])],
  [
    'sync draft: changes since',
    (db) => sync.changedAfter(db, user, { since: ago(2), ownClient: undefined, limit: 50 }),
  ],
];

test.each(cases)('%s reads no big table whole', async (_, run) => {
  const list = await explained(run);
  expect(list.length).toBeGreaterThan(0);
  expect(seqScans(list)).toEqual([]);
});

test("the sync draft reads the record a subscribe names by its key, not by a lookup run for each of the user's records", async () => {
  const list = await explained((db) => sync.findMatches(db, user, items([hex(1), hex(2)], [popularHash, hex(3)])));
  const filtered = list
    .flatMap((e) => [e.custom, e.generic])
    .flatMap((p) => (p ? nodes(p) : []))
    .filter((n) => n['Relation Name'] === 'subscriptions' && /SubPlan/.test(n.Filter ?? ''));
  expect(list.length).toBe(1);
  expect(filtered).toEqual([]);
});

type RunNode = PlanNode & { 'Actual Rows': number; 'Actual Loops': number };

test("the sync draft's read of a batch probes by key for a person whose records outgrew the statistics", async () => {
  // A person who has just imported 3,000 records, not yet in PostgreSQL's statistics (they say a user has
  // about 30): the generic plan, run, must read each record it names by its key, at most one row a probe.
  // A plan that joins the user's records read in a bulk (a bitmap or hash of all 3,000) fails here.
  const sent: { text: string; values: unknown[] }[] = [];
  const capture = {
    query: async (config: { text: string; values: unknown[] }) => {
      sent.push(config);
      return client.query(config.text, config.values);
    },
  } as unknown as Queryable;
  await client.query('BEGIN');
  try {
    const id = (
      await client.query<{ id: number }>(
        `INSERT INTO users (username, password_hash) VALUES ('importer', 'x') RETURNING id`,
      )
    ).rows[0]!.id;
    await client.query(
      `WITH s AS (
         INSERT INTO subscriptions (user_id, guid, feed_url, url_hash, subscription_changed)
         SELECT $1, md5('g' || g)::uuid, 'https://i.example/' || g, md5('u' || g)::uuid, now() FROM generate_series(1, 3000) g
         RETURNING user_id, id, changed)
       INSERT INTO sync_subscription_changes (user_id, subscription_id, subscribed_at, occurred_at, stamp)
       SELECT user_id, id, changed, changed, changed FROM s`,
      [id],
    );
    const guids = (k: number) => `md5('g${k}')::uuid`;
    const known = await client.query<{ g: string; u: string; g12: string }>(
      `SELECT ${guids(7)}::text AS g, md5('u12')::uuid::text AS u, ${guids(12)}::text AS g12`,
    );
    const { g, u, g12 } = known.rows[0]!;
    const read = await sync.findMatches(capture, id, items([g, hex(1), hex(2)], [hex(3), u, hex(4)]));
    expect(read.found.map((f) => f?.guid)).toEqual([g, g12, undefined]);
    const [statement] = sent;
    await client.query(`SET LOCAL plan_cache_mode = force_generic_plan`);
    await client.query(`PREPARE named_by_subscribes AS ${statement!.text}`);
    const args = statement!.values.map((v) => `'${String(v)}'`).join(', ');
    const run = await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE named_by_subscribes(${args})`);
    const plan = (run.rows[0]['QUERY PLAN'] as { Plan: RunNode }[])[0]!.Plan;
    const bulk = nodes(plan)
      .map((n) => n as RunNode)
      .filter((n) => ['subscriptions', 'sync_subscription_changes'].includes(n['Relation Name'] ?? ''))
      .filter((n) => n['Actual Rows'] > 1)
      .map((n) => `${n['Node Type']} on ${n['Relation Name']}: ${n['Actual Rows']} rows`);
    expect(bulk).toEqual([]);
    expect(sent).toHaveLength(1);
  } finally {
    await client.query('ROLLBACK');
  }
});
