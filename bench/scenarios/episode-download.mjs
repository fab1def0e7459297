// A full download of episode actions (what every app does on its first sync and on a forced full sync;
// AntennaPod in one request): 16 users with 2,000 play actions each over 20 podcasts,
// GET /api/2/episodes/{user}.json?since=0 at 16 connections, against the floor's minimal Express + pg
// handler returning the same 2,000 rows as JSON, alternating, with the CPU of each request. Then one user
// with 200,000 actions: the peak memory above idle of castsync and of PostgreSQL during one full download,
// and during four at once.
import zlib from 'node:zlib';
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

/**
 * What each compression level makes of one full download's body, compressed as the server does (one
 * stream, each page of about 125 KB flushed): bytes per action, CPU per download, and ns of CPU per byte
 * saved. Medians of 20.
 */
async function compressionTable(body) {
  const pages = [];
  for (let i = 0; i < body.length; i += 125_000) pages.push(body.subarray(i, i + 125_000));
  const measure = async (make) => {
    const cpu = [];
    let bytes = 0;
    for (let r = 0; r < 20; r++) {
      const c0 = process.cpuUsage();
      const z = make();
      bytes = 0;
      z.on('data', (d) => (bytes += d.length));
      const ended = new Promise((resolve) => z.on('end', resolve));
      for (const p of pages) z.write(p);
      z.end();
      await ended;
      const c = process.cpuUsage(c0);
      cpu.push((c.user + c.system) / 1000);
    }
    const ms = median(cpu);
    return { bytes_per_action: bytes / ACTIONS, cpu_ms: ms, ns_per_byte_saved: (ms * 1e6) / (body.length - bytes) };
  };
  const { constants: k } = zlib;
  const table = {};
  for (const level of [1, 3, 6, 9]) {
    table[`gzip ${level}`] = await measure(() => zlib.createGzip({ level, flush: k.Z_SYNC_FLUSH }));
  }
  for (const q of [1, 2, 3, 4, 5]) {
    const params = { [k.BROTLI_PARAM_QUALITY]: q, [k.BROTLI_PARAM_LGWIN]: 18 };
    table[`br ${q}`] = await measure(() => zlib.createBrotliCompress({ params, flush: k.BROTLI_OPERATION_FLUSH }));
  }
  return { identity_bytes_per_action: body.length / ACTIONS, ...table };
}

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
  // The same download as OkHttp asks for it (Android apps): gzip.
  const castsyncGzip = (i) => {
    const r = castsync(i);
    return { ...r, headers: { ...r.headers, 'accept-encoding': 'gzip', 'user-agent': 'okhttp/4.12.0' } };
  };
  const floorGet = (i) => ({ method: 'GET', path: `/floor/episodes/${users[i % USERS].id}?since=0`, headers: {} });
  // Untimed first: every password verified once, both processes warm.
  await load(origin, castsync, 2);
  await load(floor, floorGet, 2);
  const rows = [];
  for (let r = 0; r < ROUNDS; r++) {
    const a = await load(origin, castsync, SECONDS, CONN, ctx.serverPid());
    const b = await load(floor, floorGet, SECONDS, CONN, proc.pid);
    const g = await load(origin, castsyncGzip, SECONDS, CONN, ctx.serverPid());
    rows.push({ a, b, g, ratio: a.rps / b.rps });
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
    // Where the bytes go, per action: read by the server (PostgreSQL's answers, the requests) and written
    // by it (to the clients, the queries).
    castsync_server_bytes_per_action: {
      read: mid((x) => x.a.server_read_bytes) / ACTIONS,
      written: mid((x) => x.a.server_written_bytes) / ACTIONS,
    },
    errors: rows.reduce((n, x) => n + x.a.errors + x.b.errors + x.g.errors, 0),
    fresh_page_us: results.fresh_page_us,
    loopback_copy_us_per_100kib: results.loopback_copy_us_per_100kib,
  };
  const plain = await download(origin, castsync(0).path, castsync(0).headers);
  const zipped = await download(origin, castsync(0).path, castsyncGzip(0).headers);
  results[`episode download, ${ACTIONS} actions, gzip`] = {
    castsync_rps: mid((x) => x.g.rps),
    ratio_to_floor: mid((x) => x.g.rps / x.b.rps),
    castsync_p50_ms: mid((x) => x.g.p50),
    castsync_cpu_ms: mid((x) => x.g.server_cpu_ms + x.g.postgres_cpu_ms),
    castsync_cpu_split_ms: { server: mid((x) => x.g.server_cpu_ms), postgres: mid((x) => x.g.postgres_cpu_ms) },
    wire_bytes_per_action: { identity: plain.bytes / ACTIONS, gzip: zipped.bytes / ACTIONS },
  };
  const body = Buffer.from(
    await (await fetch(origin + castsync(0).path, { headers: castsync(0).headers })).arrayBuffer(),
  );
  results['compression of a download of 2000 actions'] = await compressionTable(body);
  log(`measuring the peak memory of a full download of ${BIG} actions ...`);
  results[`episode download, ${BIG} actions`] = await bigDownload(ctx);
}
