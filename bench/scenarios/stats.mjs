// Listening statistics of a user with 20,000 play actions over 3 years (2,000 episodes of 20 podcasts, each
// heard in ten 6-minute spans that overlap by 30 s, on 3 devices) against one with 200, at 4 connections:
// GET /v1/stats for a month and for all of it, and the web page's statistics and year in review. The
// statistics are computed on read (docs/decisions/stats-on-read.md): these figures say whether that holds.
import { figuresOf, log, PASSWORD, sideBySide, uploadActions } from '../lib.mjs';

const DAY_MS = 86_400_000;

/** `count` plays spread evenly over 3 years from 2023-01-01, an episode after another. */
function plays(count) {
  return Array.from({ length: count }, (_, i) => {
    const episode = Math.floor(i / 10);
    const started = (i % 10) * 330;
    return {
      podcast: `https://stats.bench.example/${episode % 20}/feed.xml`,
      episode: `https://stats.bench.example/${episode % 20}/${episode}.mp3`,
      action: 'play',
      timestamp: new Date(Date.UTC(2023, 0, 1) + Math.floor((i * 3 * 365 * DAY_MS) / count)).toISOString().slice(0, 19),
      started,
      position: started + 360,
      total: 3600,
      device: `device-${i % 3}`,
    };
  });
}

/** A browser session's cookie for the user, through the sign-in form. */
async function webCookie(origin, name, password) {
  const page = await fetch(`${origin}/`);
  const presession = /castsync_csrf=[^;]+/.exec(page.headers.get('set-cookie') ?? '')[0];
  const csrf = /name="_csrf" value="([^"]*)"/.exec(await page.text())[1];
  const r = await fetch(`${origin}/web/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: presession, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf, username: name, password }),
  });
  return /castsync_web=[^;]+/.exec(r.headers.get('set-cookie') ?? '')[0];
}

async function statsOf(ctx, name, count) {
  const { pool, origin } = ctx;
  await pool.query('INSERT INTO users (username, password_hash) VALUES ($1, $2)', [name, ctx.hash]);
  const user = await ctx.login(name);
  const all = plays(count);
  await uploadActions(origin, user, all);
  await pool.query('VACUUM ANALYZE episode_actions');
  const cookie = await webCookie(origin, name, PASSWORD);
  const api = (query) => () => ({ method: 'GET', path: `/v1/stats${query}`, headers: { authorization: user.bearer } });
  const web = (path) => () => ({ method: 'GET', path, headers: { cookie } });
  return figuresOf(
    origin,
    [
      ['api_month', api('?from=2025-06-01&to=2025-06-30')],
      ['api_all', api('')],
      ['web_stats', web('/web/stats')],
      ['web_year', web('/web/stats/2024')],
    ],
    4,
  );
}

export default async function stats(ctx, results) {
  log('measuring listening statistics: 20,000 against 200 plays per user ...');
  const few = await statsOf(ctx, 'stats-200', 200);
  const many = await statsOf(ctx, 'stats-20000', 20_000);
  results['statistics, 20,000 vs 200 plays per user'] = sideBySide(few, many);
}
