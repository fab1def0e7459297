// The fetcher's cycle over the data set's distinct feeds, served by the loopback feed hosts (bench/feeds.mjs):
// the feeds made due in two parts of different sizes (a quarter, then the rest), each part's time until
// every feed of it is fetched, feeds per second, and CPU per feed. A cycle linear in the number of feeds
// fetches both parts at the same rate, on every size of data set. And the plans of the fetcher's statements.
import { join } from 'node:path';
import { here, sleep, startProcess, stop } from '../lib.mjs';
import { withPlans } from './plans.mjs';
import { clusterPids, cpuMs } from './proc.mjs';
import { declaresGuid, FEED_HOSTS, feedUrl } from './shape.mjs';

/** At most this many feeds a cycle (FETCH_FEEDS), so that SCALE=1 need not fetch 100,000. */
const LIMIT = Number(process.env.FETCH_FEEDS ?? 20_000);
const FETCHING = { FEED_FETCH: 'true', FEED_FETCH_ALLOW_CIDRS: '127.0.0.0/8' };

/**
 * Makes these feeds due and waits until each is fetched (or failed) and not due again; seconds, feeds per
 * second, failures. A feed counts as fetched if it was since `since` (the cycle's start): the server's
 * discovery of new subscribers may have made one due before, and a fetch of it in flight when it is made
 * due here ends after with its own earlier time, and is not due again.
 */
async function fetchAll(pool, hashes, log, label, since) {
  const t0 = Date.now();
  await pool.query(`UPDATE feeds SET next_fetch_at = now() WHERE url_hash = ANY ($1::uuid[])`, [hashes]);
  for (let waited = 0, done = 0; done < hashes.length; waited++) {
    await sleep(500);
    done = (
      await pool.query(
        `SELECT count(*)::int AS n FROM feeds WHERE url_hash = ANY ($1::uuid[])
            AND next_fetch_at > now() + interval '5 minutes' AND (fetched_at >= $2 OR failures > 0)`,
        [hashes, since],
      )
    ).rows[0].n;
    if (waited % 60 === 59) log(`  fetcher, ${label}: ${done} of ${hashes.length}`);
  }
  // The rate from the first fetch to the last: the fetcher's own pace, without its second to notice.
  const { rows } = await pool.query(
    `SELECT count(*) FILTER (WHERE failures > 0)::int AS failed,
            extract(epoch FROM max(fetched_at) - min(fetched_at))::float8 AS span
       FROM feeds WHERE url_hash = ANY ($1::uuid[])`,
    [hashes],
  );
  return {
    feeds: hashes.length,
    seconds: (Date.now() - t0) / 1000,
    feeds_per_s: (hashes.length - 1) / rows[0].span,
    failed: rows[0].failed,
  };
}

/** The loopback feed hosts of the data set's feed URLs (bench/feeds.mjs), answering after 20 ms. */
const feedHosts = (world) =>
  startProcess(
    process.execPath,
    [join(here, 'feeds.mjs'), String(world.feedPort), String(FEED_HOSTS), '20', 'ranked'],
    {},
    async (out) => out.includes('feeds ready'),
  );

export async function fetchCycle(world, log) {
  const { pool } = world;
  const hosts = await feedHosts(world);
  try {
    const since = (await pool.query('SELECT now() AS at')).rows[0].at;
    await world.restart(FETCHING);
    // The data set's feeds (not the bench's own pushed ones), and only they due.
    const { rows } = await pool.query(
      `SELECT url_hash FROM feeds WHERE feed_url !~ '/1\\d{6}\\.xml$' ORDER BY url_hash LIMIT $1`,
      [LIMIT],
    );
    await pool.query(
      `UPDATE feeds SET next_fetch_at = now() + interval '1 day' WHERE next_fetch_at < now() + interval '1 hour'`,
    );
    const all = rows.map((r) => r.url_hash);
    const quarter = Math.ceil(all.length / 4);
    const out = { feeds: all.length };
    for (const [label, hashes] of Object.entries({ quarter: all.slice(0, quarter), rest: all.slice(quarter) })) {
      const node = world.serverPid();
      const cpu0 = cpuMs([node]) + cpuMs(clusterPids(world.pgDir));
      out[label] = await fetchAll(pool, hashes, log, label, since);
      out[label].cpu_ms_per_feed = (cpuMs([node]) + cpuMs(clusterPids(world.pgDir)) - cpu0) / hashes.length;
      log(`  fetcher, ${label}: ${hashes.length} feeds in ${out[label].seconds.toFixed(1)} s`);
    }
    out.rest_vs_quarter = out.rest.feeds_per_s / out.quarter.feeds_per_s;
    return out;
  } finally {
    await stop(hosts);
    await world.restart();
  }
}

/** The plans of one fetch of the most subscribed feeds, two of which declare a guid of their own. */
export async function fetcherPlans(world, log) {
  const hosts = await feedHosts(world);
  try {
    const since = (await world.pool.query('SELECT now() AS at')).rows[0].at;
    return await withPlans(world, FETCHING, (capture) =>
      capture('fetcher', async () => {
        const ranks = Array.from({ length: 25 }, (_, k) => k + 1);
        const { rows } = await world.pool.query(`SELECT url_hash FROM feeds WHERE feed_url = ANY ($1)`, [
          ranks.map((r) => feedUrl(world.feedPort, r)),
        ]);
        log(`  fetching ${rows.length} feeds, ${ranks.filter(declaresGuid).length} of them with a guid of their own`);
        await fetchAll(
          world.pool,
          rows.map((r) => r.url_hash),
          log,
          'plans',
          since,
        );
      }),
    );
  } finally {
    await stop(hosts);
  }
}
