// The APIs while the fetcher works through a backlog: a server with the fetcher on, 2,000 feeds due on 20
// local hosts (bench/feeds.mjs: 68 KB feeds, 200 ms to answer), and windows of the same GET, since-sync and
// POST with the backlog paused (made not due) and resumed, alternating. The POSTs send feeds castsync
// knows already (new to the user), so that they add no fetches of their own to either window.
import { join } from 'node:path';
import { getPage, sinceSync } from '../context.mjs';
import {
  here,
  json,
  load,
  log,
  median,
  require,
  ROUNDS,
  SECONDS,
  sleep,
  startProcess,
  stop,
  URL_HASH,
  USERS,
  CONN,
} from '../lib.mjs';

const { freePort } = require('./dist/db/embedded.js');

export default async function fetchBacklog(ctx, results) {
  const { pool, origin, users } = ctx;
  log('measuring the APIs while the fetcher works through a backlog of 2,000 feeds ...');
  const feedPort = await freePort();
  const feedHosts = await startProcess(
    process.execPath,
    [join(here, 'feeds.mjs'), String(feedPort), '20', '200'],
    {},
    async (out) => out.includes('feeds ready'),
  );
  ctx.others.push(feedHosts);
  const hostFeed = (k, path) => `http://127.0.0.${2 + (k % 20)}:${feedPort}/${path}.xml`;
  await pool.query(`UPDATE feeds SET next_fetch_at = now() + interval '1 day'`);
  const KNOWN = 300 * SECONDS * ROUNDS * 2 * 100;
  // Known and failing (their hosts do not exist): a subscription makes a known feed due at once when it
  // was last fetched before it (repo.dueForSubscribers), but leaves a failing one to its back-off, so the
  // POSTs add no fetches.
  await pool.query(
    `INSERT INTO feeds (url_hash, feed_url, next_fetch_at, failures)
     SELECT ${URL_HASH('f.url')}, f.url, now() + interval '1 day', 1
       FROM generate_series(1, $1::int) n, LATERAL (SELECT 'https://known.bench.example/' || n || '.xml' AS url) f
     ON CONFLICT DO NOTHING`,
    [KNOWN],
  );
  // The records so far are not the backlog (their hosts do not exist): as if the fetcher had looked at them.
  await pool.query(
    `INSERT INTO feed_discovery (user_id, noted_until, noted_id)
     SELECT id, last_change, 9223372036854775807 FROM users
     ON CONFLICT (user_id) DO UPDATE SET noted_until = excluded.noted_until, noted_id = excluded.noted_id`,
  );
  await pool.query('VACUUM ANALYZE feeds');
  let known = 0;
  await ctx.restart({ FEED_FETCH: 'true', FEED_FETCH_ALLOW_CIDRS: '127.0.0.0/8' });
  const apiScenarios = {
    get: getPage(users),
    since: sinceSync(users),
    post: (i) => ({
      method: 'POST',
      path: '/v1/subscriptions',
      headers: { authorization: users[i % USERS].bearer, 'content-type': 'application/json' },
      body: JSON.stringify({
        subscriptions: Array.from({ length: 100 }, () => ({
          feed_url: `https://known.bench.example/${1 + (known++ % KNOWN)}.xml`,
        })),
      }),
    }),
  };
  for (const warmUp of Object.values(apiScenarios)) {
    if ((await load(origin, warmUp, 2)).errors) throw new Error('warm-up with the fetcher: errors');
  }
  await pool.query('INSERT INTO users (username, password_hash) VALUES ($1, $2)', ['backlog', ctx.hash]);
  const backlogUser = await ctx.login('backlog');
  const subscribeBacklog = async (paths) => {
    const r = await json(
      origin,
      'POST',
      '/v1/subscriptions',
      { authorization: backlogUser.bearer },
      { subscriptions: paths.map((p, k) => ({ feed_url: hostFeed(k, p) })) },
    );
    if (r.status !== 200) throw new Error(`backlog POST ${r.status}`);
  };
  for (let off = 0; off < 2000; off += 500) {
    await subscribeBacklog(Array.from({ length: 500 }, (_, k) => `backlog/${off + k}`));
  }
  const BACKLOG = `feed_url LIKE 'http://127.0.0.%/backlog/%' AND fetched_at IS NULL AND failures = 0`;
  const fetchedSoFar = async () =>
    (
      await pool.query(
        `SELECT count(*)::int AS n FROM feeds WHERE feed_url LIKE 'http://127.0.0.%/backlog/%' AND fetched_at IS NOT NULL`,
      )
    ).rows[0].n;
  let wakes = 0;
  const backlogState = {
    // Not due: the fetcher finishes the feeds it holds (a batch takes about a second) and stops.
    paused: async () => {
      await pool.query(`UPDATE feeds SET next_fetch_at = now() + interval '1 day' WHERE ${BACKLOG}`);
      await sleep(1500);
    },
    // Due again, and a feed nobody had subscribed: the fetcher's next look (once a second) finds them.
    working: async () => {
      await pool.query(`UPDATE feeds SET next_fetch_at = now() WHERE ${BACKLOG}`);
      await subscribeBacklog([`wake/${wakes++}`]);
      await sleep(1500);
    },
  };
  const windows = { paused: {}, working: {} };
  let fetchedWorking = 0;
  let secondsWorking = 0;
  for (let r = 0; r < ROUNDS; r++) {
    for (const [label, make] of Object.entries(apiScenarios)) {
      for (const state of r % 2 === 0 ? ['paused', 'working'] : ['working', 'paused']) {
        await backlogState[state]();
        const before = await fetchedSoFar();
        const t0 = Date.now();
        const row = await load(origin, make, SECONDS, CONN, ctx.serverPid());
        if (state === 'working') {
          fetchedWorking += (await fetchedSoFar()) - before;
          secondsWorking += (Date.now() - t0) / 1000;
        }
        (windows[state][label] ??= []).push(row);
      }
    }
  }
  const mid = (rows, f) => median(rows.map(f));
  results['APIs during a fetch backlog'] = {
    ...Object.fromEntries(
      Object.keys(apiScenarios).map((k) => {
        const [p, w] = [windows.paused[k], windows.working[k]];
        const both = (f) => [mid(p, f), mid(w, f)];
        return [
          k,
          {
            rps: both((x) => x.rps),
            p50_ms: both((x) => x.p50),
            p99_ms: both((x) => x.p99),
            server_cpu_ms: both((x) => x.server_cpu_ms),
            postgres_cpu_ms: both((x) => x.postgres_cpu_ms),
            rps_ratio: mid(w, (x) => x.rps) / mid(p, (x) => x.rps),
            errors: [...p, ...w].reduce((n, x) => n + x.errors, 0),
          },
        ];
      }),
    ),
    feeds_fetched_per_s: fetchedWorking / secondsWorking,
    backlog_left: 2000 - (await fetchedSoFar()),
    // A fetch that failed leaves its feed out of the backlog: how many, and why (none, when all is well).
    ...(
      await pool.query(
        `SELECT count(*)::int AS backlog_failed, min(last_error) AS backlog_error FROM feeds
          WHERE feed_url LIKE 'http://127.0.0.%/backlog/%' AND failures > 0`,
      )
    ).rows[0],
  };
  await stop(feedHosts);
  // The backlog's POSTs gave the 20 users tens of thousands of changes after the since mark: removed, so
  // that the scale phase's "before" is the same 1,000 records a user as the figures above.
  await pool.query(`DELETE FROM subscriptions WHERE feed_url LIKE 'https://known.bench.example/%'`);
  await pool.query('UPDATE users u SET record_count = (SELECT count(*) FROM subscriptions s WHERE s.user_id = u.id)');
  await ctx.restart();
}
