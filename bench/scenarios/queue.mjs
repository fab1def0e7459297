// Up next: a user with 500 queued episodes and 20,000 play actions (over the 500 episodes and 200 more)
// against one with 20 and 200, at 4 connections (one person's devices): GET /v1/queue, a move of the last
// item to the top (the edit an app sends most), and beside them the same user's first page of
// subscriptions (50 records), for scale. Every queue read looks for episodes played since they were queued
// (docs/queue.md): these figures say what that costs.
import { figuresOf, json, log, sideBySide, uploadActions } from '../lib.mjs';

const podcast = (n) => `https://queue.bench.example/${n % 50}/feed.xml`;
const episode = (n) => `https://queue.bench.example/${n % 50}/${n}.mp3`;

/** `count` plays, a tenth of the way into each episode, spread over `episodes` episodes. */
const plays = (count, episodes) =>
  Array.from({ length: count }, (_, i) => ({
    podcast: podcast(i % episodes),
    episode: episode(i % episodes),
    action: 'play',
    timestamp: new Date(Date.UTC(2025, 0, 1) + i * 60_000).toISOString().slice(0, 19),
    started: 0,
    position: 60 + (i % 7),
    total: 3600,
  }));

async function queueOf(ctx, name, items, actions) {
  const { pool, origin } = ctx;
  await pool.query('INSERT INTO users (username, password_hash) VALUES ($1, $2)', [name, ctx.hash]);
  const user = await ctx.login(name);
  const auth = { authorization: user.bearer };
  const feeds = Array.from({ length: 50 }, (_, n) => ({ feed_url: podcast(n) }));
  await json(origin, 'POST', '/v1/subscriptions', auth, { subscriptions: feeds });
  await uploadActions(origin, user, plays(actions, items + 200));
  const list = Array.from({ length: items }, (_, n) => ({ podcast_url: podcast(n), enclosure_url: episode(n) }));
  const put = await json(origin, 'PUT', '/v1/queue', { ...auth, 'if-match': '*' }, { items: list });
  if (put.status !== 200 || put.body.items.length !== items) throw new Error(`queue PUT ${put.status}`);
  await pool.query('VACUUM ANALYZE queue_items, episode_actions, episode_latest');
  const ids = put.body.items.map((i) => i.id);
  const body = JSON.stringify({ at: 0 });
  return figuresOf(
    origin,
    [
      ['get_queue', () => ({ method: 'GET', path: '/v1/queue', headers: auth })],
      [
        'move_to_top',
        (i) => ({
          method: 'PATCH',
          path: `/v1/queue/items/${ids[ids.length - 1 - (i % ids.length)]}`,
          headers: { ...auth, 'content-type': 'application/json' },
          body,
        }),
      ],
      ['get_subscriptions', () => ({ method: 'GET', path: '/v1/subscriptions?per_page=50', headers: auth })],
    ],
    4,
  );
}

export default async function queue(ctx, results) {
  log('measuring Up next: 500 items and 20,000 actions against 20 and 200 ...');
  const few = await queueOf(ctx, 'queue-20', 20, 200);
  const many = await queueOf(ctx, 'queue-500', 500, 20_000);
  results['up next, 500 items and 20,000 actions vs 20 and 200'] = sideBySide(few, many);
}
