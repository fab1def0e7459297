// A full download of episode actions (what every app does on its first sync and on a forced full sync;
// AntennaPod in one request): 16 users with 2,000 play actions each over 20 podcasts,
// GET /api/2/episodes/{user}.json?since=0 at 16 connections, against the floor's minimal Express + pg
// handler returning the same 2,000 rows as JSON, alternating, with the CPU of each request. Then one user
// with 200,000 actions: the peak memory above idle of castsync and of PostgreSQL during one full download,
// and during four at once.
import { CONN, download, json, load, log, median, peakMemory, ROUNDS, SECONDS, uploadActions } from '../lib.mjs';

const USERS = 16;
const ACTIONS = 2000;
const BIG = 200_000;

/** A user's `n` play actions over 20 podcasts, a minute apart, as an app uploads them. */
const playsOf = (n) =>
  Array.from({ length: n }, (_, k) => ({
    podcast: `https://dl.bench.example/${k % 20}/feed.xml`,
    episode: `https://dl.bench.example/${k % 20}/${Math.floor(k / 20)}.mp3`,
    guid: `dl-${k % 20}-${Math.floor(k / 20)}`,
    action: 'play',
    timestamp: new Date(Date.UTC(2026, 0, 1) + k * 60_000).toISOString().slice(0, 19),
    started: 0,
    position: 60 + k,
    total: 3600,
    device: 'phone',
  }));

/** One user of BIG actions: peak memory above idle during one full download, and during four at once. */
async function bigDownload(ctx) {
  const name = 'download-big';
  await ctx.pool.query('INSERT INTO users (username, password_hash) VALUES ($1, $2)', [name, ctx.hash]);
  const user = await ctx.login(name);
  await uploadActions(ctx.origin, user, playsOf(BIG));
  await ctx.pool.query('VACUUM ANALYZE episode_actions');
  const headers = { authorization: user.basic };
  const path = `/api/2/episodes/${name}.json?since=0`;
  // Untimed first, and checked: every action, in order, once.
  const check = await json(ctx.origin, 'GET', path, headers);
  if (check.status !== 200 || check.body.actions.length !== BIG) throw new Error('the big download is not whole');
  const full = async (n) => {
    const answers = await Promise.all(Array.from({ length: n }, () => download(ctx.origin, path, headers)));
    for (const a of answers) if (a.status !== 200 || !a.complete) throw new Error(`big download ${a.status}`);
    return answers[0].bytes;
  };
  const one = await peakMemory(ctx.serverPid(), () => full(1));
  const four = await peakMemory(ctx.serverPid(), () => full(4));
  const bytes = await full(1);
  const figures = (m) => ({
    ms: m.ms,
    peak_above_idle_mib: {
      server: m.server_mib,
      postgres: m.postgres_rss_mib,
      postgres_private: m.postgres_private_mib,
    },
    cpu_ms: { server: m.server_cpu_ms, postgres: m.postgres_cpu_ms },
  });
  return { mib: bytes / 2 ** 20, one: figures(one), four_at_once: figures(four) };
}

export default async function episodeDownload(ctx, results) {
  const { pool, origin } = ctx;
  log(`measuring full episode downloads: ${USERS} users x ${ACTIONS} actions ...`);
  const users = [];
  for (let u = 0; u < USERS; u++) {
    const name = `download${u}`;
    await pool.query('INSERT INTO users (username, password_hash) VALUES ($1, $2)', [name, ctx.hash]);
    const user = await ctx.login(name);
    user.id = (await pool.query('SELECT id FROM users WHERE username = $1', [name])).rows[0].id;
    const r = await json(
      origin,
      'POST',
      `/api/2/episodes/${name}.json`,
      { authorization: user.basic },
      playsOf(ACTIONS),
    );
    if (r.status !== 200) throw new Error(`episode download seed ${r.status}`);
    users.push(user);
  }
  await pool.query('VACUUM ANALYZE episode_actions');
  const { origin: floor, proc } = await ctx.floor();
  const check = await json(origin, 'GET', `/api/2/episodes/${users[0].name}.json?since=0`, {
    authorization: users[0].basic,
  });
  if (check.body.actions.length !== ACTIONS) throw new Error(`the download found ${check.body.actions.length}`);
  const castsync = (i) => {
    const u = users[i % USERS];
    return { method: 'GET', path: `/api/2/episodes/${u.name}.json?since=0`, headers: { authorization: u.basic } };
  };
  const floorGet = (i) => ({ method: 'GET', path: `/floor/episodes/${users[i % USERS].id}?since=0`, headers: {} });
  // Untimed first: every password verified once, both processes warm.
  await load(origin, castsync, 2);
  await load(floor, floorGet, 2);
  const rows = [];
  for (let r = 0; r < ROUNDS; r++) {
    const a = await load(origin, castsync, SECONDS, CONN, ctx.serverPid());
    const b = await load(floor, floorGet, SECONDS, CONN, proc.pid);
    rows.push({ a, b, ratio: a.rps / b.rps });
  }
  const mid = (f) => median(rows.map(f));
  results[`episode download, ${ACTIONS} actions`] = {
    castsync_rps: mid((x) => x.a.rps),
    floor_rps: mid((x) => x.b.rps),
    ratio: mid((x) => x.ratio),
    castsync_p50_ms: mid((x) => x.a.p50),
    floor_p50_ms: mid((x) => x.b.p50),
    castsync_p99_ms: mid((x) => x.a.p99),
    // CPU per request, as the bench measures it: the server process and all of PostgreSQL's.
    castsync_cpu_ms: mid((x) => x.a.server_cpu_ms + x.a.postgres_cpu_ms),
    castsync_cpu_split_ms: { server: mid((x) => x.a.server_cpu_ms), postgres: mid((x) => x.a.postgres_cpu_ms) },
    floor_cpu_ms: mid((x) => x.b.server_cpu_ms + x.b.postgres_cpu_ms),
    // Pages first touched per request (minor faults), and what they would cost where a page costs 13 µs.
    castsync_faults: { server: mid((x) => x.a.server_faults), postgres: mid((x) => x.a.postgres_faults) },
    castsync_faults_ms_at_13us: mid((x) => ((x.a.server_faults + x.a.postgres_faults) * 13) / 1000),
    errors: rows.reduce((n, x) => n + x.a.errors + x.b.errors, 0),
    fresh_page_us: results.fresh_page_us,
  };
  log(`measuring the peak memory of a full download of ${BIG} actions ...`);
  results[`episode download, ${BIG} actions`] = await bigDownload(ctx);
}
