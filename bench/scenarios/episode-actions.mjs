// Episode actions: a user with 20,000 actions over 200 podcasts (one episode each, a hundred plays of it)
// against one with 200, at 16 connections: a batch of 30 plays (AntennaPod's), a since that finds 50
// actions, the aggregated view (200 episodes for both), and the first page of 50 of `/v1/episodes` (the
// episode state of every door: docs/decisions/episode-state.md).
import { figuresOf, json, log, sideBySide, sleep, uploadActions } from '../lib.mjs';

async function actionsOf(ctx, name, perEpisode) {
  const { pool, origin } = ctx;
  await pool.query('INSERT INTO users (username, password_hash) VALUES ($1, $2)', [name, ctx.hash]);
  const user = await ctx.login(name);
  const all = [];
  for (let k = 0; k < perEpisode; k++) {
    for (let p = 0; p < 200; p++) {
      all.push({
        podcast: `https://ep.bench.example/${p}/feed.xml`,
        episode: `https://ep.bench.example/${p}/1.mp3`,
        action: 'play',
        timestamp: new Date(Date.UTC(2026, 0, 1) + k * 60_000).toISOString().slice(0, 19),
        position: k,
        device: 'seed',
      });
    }
  }
  await uploadActions(origin, user, all);
  const mark = Date.now();
  await sleep(1100);
  const fifty = Array.from({ length: 50 }, (_, k) => ({ ...all[k], timestamp: '2026-11-01T00:00:00', device: 'mark' }));
  await json(origin, 'POST', `/api/2/episodes/${name}.json`, { authorization: user.basic }, fifty);
  await pool.query('VACUUM ANALYZE episode_actions');
  const get = (query) => () => ({
    method: 'GET',
    path: `/api/2/episodes/${name}.json?${query}`,
    headers: { authorization: user.basic },
  });
  const since = Math.ceil(mark / 1000);
  const sinceCheck = await json(origin, 'GET', `/api/2/episodes/${name}.json?since=${since}`, {
    authorization: user.basic,
  });
  if (sinceCheck.body.actions.length !== 50) throw new Error(`since found ${sinceCheck.body.actions.length}, not 50`);
  // The reads first: the batches posted afterwards are changes after the mark.
  return figuresOf(origin, [
    ['get_since_50', get(`since=${since}`)],
    ['get_aggregated', get('aggregated=true')],
    [
      'get_v1_episodes_50',
      () => ({ method: 'GET', path: '/v1/episodes?per_page=50', headers: { authorization: user.basic } }),
    ],
    [
      'post_30_plays',
      () => ({
        method: 'POST',
        path: `/api/2/episodes/${name}.json`,
        headers: { authorization: user.basic, 'content-type': 'application/json' },
        body: JSON.stringify(
          Array.from({ length: 30 }, (_, k) => ({ ...all[k], timestamp: undefined, position: ctx.next() })),
        ),
      }),
    ],
  ]);
}

export default async function episodeActions(ctx, results) {
  log('measuring episode actions: 20,000 against 200 per user ...');
  const few = await actionsOf(ctx, 'actions-200', 1);
  const many = await actionsOf(ctx, 'actions-20000', 100);
  results['episode actions, 20,000 vs 200 per user'] = sideBySide(few, many);
}
