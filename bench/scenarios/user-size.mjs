// One user with BIG_SUBS records among the others, against one with SUBS: the first page, a since-sync that
// finds 50 changes, and a POST of 100 new feeds, at 4 connections. A user's costs must not grow with the
// user's size (a library imported from another service, or years of episode history).
import { newFeedsBody } from '../context.mjs';
import { BIG_SUBS, load, log, SECONDS, SUBS, URL_HASH } from '../lib.mjs';

async function sized(ctx, name, records) {
  const { pool, origin } = ctx;
  await pool.query('INSERT INTO users (username, password_hash) VALUES ($1, $2)', [name, ctx.hash]);
  await pool.query(
    `INSERT INTO subscriptions (user_id, guid, feed_url, url_hash, is_subscribed, subscription_changed)
     SELECT u.id, gen_random_uuid(), f.url, ${URL_HASH('f.url')}, true, now() - interval '1 day'
       FROM users u, generate_series(0, $2::int - 1) k,
            LATERAL (SELECT 'https://feeds.sized.example/' || u.id || '/' || k || '.xml' AS url) f
      WHERE u.username = $1`,
    [name, records],
  );
  await pool.query(
    `UPDATE users u SET record_count = (SELECT count(*) FROM subscriptions s WHERE s.user_id = u.id) WHERE username = $1`,
    [name],
  );
  await pool.query('VACUUM ANALYZE subscriptions');
  const user = await ctx.login(name);
  const { id } = (await pool.query('SELECT id FROM users WHERE username = $1', [name])).rows[0];
  const step = Math.floor(records / 50);
  await ctx.markSince(
    user,
    Array.from({ length: 50 }, (_, k) => `https://feeds.sized.example/${id}/${k * step}.xml`),
  );
  const one = (request) => () => request;
  const figures = {};
  for (const [label, make] of [
    [
      'get_first_page',
      one({ method: 'GET', path: '/v1/subscriptions?per_page=50', headers: { authorization: user.bearer } }),
    ],
    [
      'since_50_changes',
      one({
        method: 'GET',
        path: `/v1/subscriptions?since=${encodeURIComponent(user.since)}&per_page=50`,
        headers: { authorization: user.bearer },
      }),
    ],
    [
      'post_100_new',
      () => ({
        method: 'POST',
        path: '/v1/subscriptions',
        headers: { authorization: user.bearer, 'content-type': 'application/json' },
        body: newFeedsBody(ctx, name),
      }),
    ],
  ]) {
    const r = await load(origin, make, SECONDS, 4);
    figures[label] = { p50_ms: r.p50, p99_ms: r.p99, errors: r.errors };
  }
  return figures;
}

export default async function userSize(ctx, results) {
  log(`measuring one user of ${BIG_SUBS} records against one of ${SUBS} ...`);
  const ofSmall = await sized(ctx, 'sized-small', SUBS);
  const ofBig = await sized(ctx, 'sized-big', BIG_SUBS);
  results[`one user of ${BIG_SUBS} vs ${SUBS} records`] = Object.fromEntries(
    Object.keys(ofSmall).map((k) => [
      k,
      {
        p50_ms: [ofSmall[k].p50_ms, ofBig[k].p50_ms],
        p99_ms: [ofSmall[k].p99_ms, ofBig[k].p99_ms],
        p50_ratio: ofBig[k].p50_ms / ofSmall[k].p50_ms,
        p99_ratio: ofBig[k].p99_ms / ofSmall[k].p99_ms,
        errors: ofSmall[k].errors + ofBig[k].errors,
      },
    ]),
  );
}
