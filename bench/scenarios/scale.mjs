// Latency at a moderate load (4 connections), before and after loading SCALE_USERS users with SUBS records
// each, spread over the table; then the plans of the hot statements for one of those users.
import { getPage, PAGES, sinceSync } from '../context.mjs';
import { load, log, require, SCALE_USERS, SECONDS, SUBS, URL_HASH, USERS } from '../lib.mjs';

const repo = require('./dist/subscriptions/repo.js');
const listRepo = require('./dist/subscriptions/list-repo.js');

const latency = async (origin, list) => ({
  get: await load(origin, getPage(list), SECONDS, 4),
  since: await load(origin, sinceSync(list), SECONDS, 4),
});

// The plans of the hot statements, as the repo functions send them (writes run in a rolled-back
// transaction, so EXPLAIN ANALYZE changes nothing).
async function plans(pool, userName) {
  const { rows } = await pool.query('SELECT id FROM users WHERE username = $1', [userName]);
  const userId = rows[0].id;
  const out = {};
  const mark = new Date(Date.now() - 1000);
  await pool.query(
    `UPDATE subscriptions SET subscription_changed = now() WHERE user_id = $1 AND id IN (SELECT id FROM subscriptions WHERE user_id = $1 ORDER BY id LIMIT 5)`,
    [userId],
  );
  const client = await pool.connect();
  const explaining = (label) => ({
    query: async (config) => {
      const r = await client.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${config.text}`, config.values);
      out[label] = r.rows.map((x) => x['QUERY PLAN']).join('\n');
      throw new Error('explained');
    },
  });
  const explain = (p) =>
    p.catch((err) => {
      if (err.message !== 'explained') out.error = err.message;
    });
  const { urlHash, podcastGuid, checkFeedUrl } = require('./dist/subscriptions/urls.js');
  const known = (
    await pool.query('SELECT feed_url FROM subscriptions WHERE user_id = $1 LIMIT 100', [userId])
  ).rows.map((r) => r.feed_url);
  const fresh = Array.from({ length: 100 }, (_, k) => `https://plans.bench.example/${k}.xml`);
  try {
    await explain(listRepo.listPage(explaining(`GET page ${PAGES} of 50`), userId, 50, (PAGES - 1) * 50));
    await explain(listRepo.listPageSince(explaining('GET since (5 changes)'), userId, mark, 50, 0));
    await explain(
      repo.findMatches(
        explaining('POST: match 100 known feeds'),
        userId,
        known.map(podcastGuid),
        known.map((u) => urlHash(checkFeedUrl(u).key)),
      ),
    );
    await client.query('BEGIN');
    await explain(
      repo.insertIfAllNew(
        explaining('POST: insert 100 new feeds'),
        userId,
        fresh.map((u) => ({
          guid: podcastGuid(u),
          feedUrl: u,
          urlHash: urlHash(checkFeedUrl(u).key),
          guidChanged: false,
        })),
      ),
    );
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
  return out;
}

export default async function scale(ctx, results) {
  if (SCALE_USERS <= USERS) return;
  const { pool, origin, users } = ctx;
  log('measuring latency with the base data ...');
  const small = await latency(origin, users);
  log(`loading ${SCALE_USERS - USERS} more users x ${SUBS} subscriptions with SQL, spread over the table ...`);
  const t0 = Date.now();
  await pool.query(
    `INSERT INTO users (username, password_hash) SELECT 'scale' || g, $1 FROM generate_series(1, $2::int) g`,
    [ctx.hash, SCALE_USERS - USERS],
  );
  await pool.query(
    `INSERT INTO subscriptions (user_id, guid, feed_url, url_hash, is_subscribed, subscription_changed)
    SELECT u.id, gen_random_uuid(), f.url, ${URL_HASH('f.url')}, true, now() - interval '1 day'
      FROM users u, generate_series(0, $1::int - 1) k,
           LATERAL (SELECT 'https://feeds.scale.example/' || u.id || '/' || k || '.xml' AS url) f
     WHERE u.username LIKE 'scale%' ORDER BY k, u.id`,
    [SUBS],
  );
  // Feed by feed across all users (k before user), so that each user's records lie on different pages
  // of the table, as when feeds are added one at a time over months: the worst layout for reading a
  // user's page. The 20 users seeded through the API have theirs together, as after an import.
  // Some guid chains and moved feeds, as real libraries have: 1 record in 100 had another guid and URL.
  await pool.query(`INSERT INTO subscription_guids (user_id, guid, subscription_id, replaced_at)
    SELECT user_id, gen_random_uuid(), id, now() - interval '2 days' FROM subscriptions WHERE id % 100 = 0`);
  await pool.query(`INSERT INTO subscription_urls (user_id, url_hash, subscription_id, feed_url)
    SELECT user_id, ${URL_HASH("feed_url || '?old'")}, id, feed_url || '?old' FROM subscriptions WHERE id % 100 = 0`);
  await pool.query('VACUUM ANALYZE');
  const records = (await pool.query('SELECT count(*)::int AS n FROM subscriptions')).rows[0].n;
  log(`  ${records} records in ${Math.round((Date.now() - t0) / 1000)} s`);
  // USERS of the spread users, evenly chosen, with a since mark of their own.
  const step = Math.floor((SCALE_USERS - USERS) / USERS);
  const spreadNames = Array.from({ length: USERS }, (_, k) => `scale${1 + k * step}`);
  const { rows: spreadRows } = await pool.query(
    'SELECT id, username FROM users WHERE username = ANY ($1) ORDER BY id',
    [spreadNames],
  );
  const spreadUsers = [];
  for (const { id, username } of spreadRows) {
    const user = await ctx.login(username);
    await ctx.markSince(
      user,
      Array.from({ length: 5 }, (_, k) => `https://feeds.scale.example/${id}/${k * 100}.xml`),
    );
    spreadUsers.push(user);
  }
  log('measuring latency with the scale data ...');
  const big = await latency(origin, users);
  const spread = await latency(origin, spreadUsers);
  const figures = (after) => ({
    get_p50_ms: [small.get.p50, after.get.p50],
    get_p99_ms: [small.get.p99, after.get.p99],
    since_p50_ms: [small.since.p50, after.since.p50],
    since_p99_ms: [small.since.p99, after.since.p99],
    get_p50_ratio: after.get.p50 / small.get.p50,
    since_p50_ratio: after.since.p50 / small.since.p50,
  });
  results.scale = {
    users: SCALE_USERS,
    records,
    ...figures(big),
    // The same figures for users whose records are spread over the table, against the same "before".
    spread: figures(spread),
    errors: [small, big, spread].reduce((n, x) => n + x.get.errors + x.since.errors, 0),
  };
  results.plans = await plans(pool, spreadRows[0].username);
}
