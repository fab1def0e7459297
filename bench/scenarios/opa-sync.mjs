// The Open Podcast API's sync draft (/api/v1/sync): a user with 20,000 applied sync actions (20,000
// subscriptions subscribed through it) against one with 200, at 16 connections: a batch of 30 subscribe
// actions of new feeds, the first page of a full sync (50 changes), and an incremental sync that finds 50.
// All of one user, so the batches wait for each other (a person's writes are serialised); then, one
// request at a time, what a batch costs per item against /v1 (bench/per-item-cost.mjs).
import { randomUUID } from 'node:crypto';
import { json, load, log, sideBySide, URL_HASH } from '../lib.mjs';
import { perItemCost } from '../per-item-cost.mjs';

const subscribe = (url, at) => ({
  type: 'subscription',
  action: 'subscribe',
  action_id: randomUUID(),
  occurred_at: at,
  data: { feed_url: url },
});

/**
 * What `actions` applied subscribe actions leave, written with SQL (through the API, 20,000 take minutes):
 * a record each (its sync id is its guid), one change stamp each (a millisecond apart, in whole milliseconds as the server's are),
 * the app's times and the action's id; then
 * the last 60 actions through the API, so that an incremental sync reads what POST wrote.
 */
async function seed(ctx, name, actions) {
  const { pool } = ctx;
  await pool.query('INSERT INTO users (username, password_hash) VALUES ($1, $2)', [name, ctx.hash]);
  await pool.query(
    `WITH u AS (SELECT id FROM users WHERE username = $1),
          made AS (
            INSERT INTO subscriptions (user_id, guid, feed_url, url_hash, is_subscribed, subscription_changed)
            SELECT u.id, gen_random_uuid(), f.url, ${URL_HASH('f.url')}, true,
                   date_trunc('milliseconds', now()) - interval '1 day' + k * interval '1 millisecond'
              FROM u, generate_series(0, $2::int - 1) k,
                   LATERAL (SELECT 'https://sync.bench.example/' || $1 || '/' || k || '.xml' AS url) f
            RETURNING user_id, id, guid AS sync_id, changed),
          noted AS (
            INSERT INTO sync_subscription_changes (user_id, subscription_id, subscribed_at, occurred_at, stamp)
            SELECT user_id, id, changed - interval '1 hour', changed - interval '1 hour', changed FROM made)
     INSERT INTO sync_actions (user_id, action_id, type, action, status, entity_id)
     SELECT user_id, gen_random_uuid(), 'subscription', 'subscribe', 'applied', sync_id FROM made`,
    [name, actions],
  );
  await pool.query(
    `UPDATE users u SET record_count = (SELECT count(*) FROM subscriptions s WHERE s.user_id = u.id),
                        last_change = (SELECT max(changed) FROM subscriptions s WHERE s.user_id = u.id)
      WHERE username = $1`,
    [name],
  );
}

async function syncOf(ctx, name, actions) {
  const { pool, origin } = ctx;
  await seed(ctx, name, actions - 60);
  const user = await ctx.login(name);
  const auth = { authorization: user.basic, 'content-type': 'application/json' };
  // One action a batch: each change its own stamp, so that a since can find 50 of them (a page never
  // splits one stamp's changes, and a batch's subscribes share one).
  for (let i = 0; i < 60; i++) {
    const batch = [subscribe(`https://sync.bench.example/${name}/api/${i}.xml`, new Date().toISOString())];
    // What castsync's statements are doing, should a seed take seconds (to tell a slow plan from a wait).
    let slow;
    const watch = setTimeout(async () => {
      slow = (
        await pool.query(
          `SELECT state, wait_event_type, wait_event, now() - query_start AS running, left(query, 300) AS query
             FROM pg_stat_activity WHERE application_name = 'castsync' AND state <> 'idle'`,
        )
      ).rows;
    }, 3000);
    const r = await json(origin, 'POST', '/api/v1/sync', auth, { requests: batch }).finally(() => clearTimeout(watch));
    if (r.status !== 200) throw new Error(`sync seed ${r.status}: ${JSON.stringify(r.body)} ${JSON.stringify(slow)}`);
  }
  // The stamp before the last 50 changes: what an app that synced a little earlier sends back.
  const recent = await pool.query(
    `SELECT s.changed FROM subscriptions s JOIN users u ON u.id = s.user_id
      WHERE u.username = $1 ORDER BY s.changed DESC, s.id DESC OFFSET 50 LIMIT 1`,
    [name],
  );
  const since = recent.rows[0].changed.toISOString();
  await pool.query('VACUUM ANALYZE subscriptions');
  await pool.query('VACUUM ANALYZE sync_subscription_changes');
  const check = await json(origin, 'GET', `/api/v1/sync?since=${since}`, auth);
  if (check.status !== 200 || check.body.results.length < 50)
    throw new Error(`since found ${check.body.results?.length}`);
  const get = (query) => () => ({ method: 'GET', path: `/api/v1/sync?${query}`, headers: auth });
  const figures = {};
  for (const [label, make] of [
    ['get_first_page', get('limit=50')],
    ['get_since_50', get(`since=${since}&limit=50`)],
    [
      'post_30_actions',
      () => ({
        method: 'POST',
        path: '/api/v1/sync',
        headers: auth,
        body: JSON.stringify({
          requests: Array.from({ length: 30 }, (_, k) =>
            subscribe(`https://sync.bench.example/${name}/new/${ctx.next()}/${k}.xml`, new Date().toISOString()),
          ),
        }),
      }),
    ],
  ]) {
    const r = await load(origin, make);
    figures[label] = { p50_ms: r.p50, p99_ms: r.p99, rps: r.rps, errors: r.errors };
  }
  return figures;
}

export default async function opaSync(ctx, results) {
  log('measuring /api/v1/sync: 20,000 actions against 200 per user ...');
  const few = await syncOf(ctx, 'sync-200', 200);
  const many = await syncOf(ctx, 'sync-20000', 20_000);
  results['opa sync, 20,000 vs 200 actions'] = sideBySide(few, many);
  log('measuring the sync batch against /v1, per item, one request at a time ...');
  await ctx.pool.query('INSERT INTO users (username, password_hash) VALUES ($1, $2)', ['sync-cost', ctx.hash]);
  const user = await ctx.login('sync-cost');
  results['opa sync vs /v1, per item, one at a time'] = await perItemCost(ctx.origin, user.basic, {
    watch: ctx.serverPid(),
  });
}
