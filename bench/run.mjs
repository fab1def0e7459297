// castsync's benchmark: castsync against the floor (bench/floor.mjs) in one run, on one PostgreSQL, with one
// load generator, then the same reads with 100 times as many users loaded. See bench/README.md.
//   npm run bench                       (builds first)
// Env: USERS (20), SUBS per user (1000), CONN (16), SECONDS per round (6), ROUNDS (3), SCALE_USERS (2000; 0
// skips the scale phase), DATABASE_URL (else an embedded PostgreSQL). Prints a table, then one JSON line.
import http from 'node:http';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const require = createRequire(join(root, 'package.json'));
const { openEmbedded, freePort } = require('./dist/db/embedded.js');
const { createLogger } = require('./dist/logger.js');
const { hashPassword } = require('./dist/auth/secrets.js');
const repo = require('./dist/subscriptions/repo.js');
const listRepo = require('./dist/subscriptions/list-repo.js');

const env = (k, d) => Number(process.env[k] ?? d);
const USERS = env('USERS', 20),
  SUBS = env('SUBS', 1000),
  CONN = env('CONN', 16);
const BIG_SUBS = env('BIG_SUBS', 100_000);
const SECONDS = env('SECONDS', 6),
  ROUNDS = env('ROUNDS', 3),
  SCALE_USERS = env('SCALE_USERS', 2000);
const PASSWORD = 'bench-password';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (...a) => console.error(...a);

async function postgres() {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL, stop: async () => {} };
  const dir = mkdtempSync(join(tmpdir(), 'castsync-bench-pg-'));
  const db = await openEmbedded({ dataDir: dir, attach: false, logger: createLogger('warn') });
  return {
    url: db.url,
    stop: async () => {
      await db.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function startProcess(cmd, args, extraEnv, readyCheck) {
  // Its own process group, so that stopping it reaches the server under npm too.
  const child = spawn(cmd, args, {
    detached: true,
    cwd: root,
    env: { ...process.env, ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out = (out + d).slice(-10_000)));
  child.stderr.on('data', (d) => (out = (out + d).slice(-10_000)));
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited:\n${out}`);
    if (await readyCheck(out)) return child;
    await sleep(100);
  }
  throw new Error(`${args.join(' ')} did not start:\n${out}`);
}

let agent = new http.Agent({ keepAlive: true, maxSockets: CONN });
function request(origin, method, path, headers, body) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = http.request(origin + path, { method, headers, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, ms: Number(process.hrtime.bigint() - t0) / 1e6 }));
    });
    req.on('error', reject);
    if (body) req.end(body);
    else req.end();
  });
}
async function json(origin, method, path, headers, body) {
  const r = await fetch(origin + path, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body && JSON.stringify(body),
  });
  return { status: r.status, headers: r.headers, body: await r.json() };
}

// A process's /proc/<pid>/stat fields after the command name (Linux): [0] state, [1] ppid, [2] pgrp,
// [11] utime, [12] stime in ticks. Undefined once the process is gone.
const TICK_MS = 10;
function stat(pid) {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  } catch {
    return undefined;
  }
}
// CPU time (ms) each process still alive has used so far.
function cpuMs(pids) {
  const out = new Map();
  for (const pid of pids) {
    const f = stat(pid);
    if (f) out.set(pid, (Number(f[11]) + Number(f[12])) * TICK_MS);
  }
  return out;
}
// CPU time used since `before` by the processes alive now (those started since count from zero).
const cpuSince = (before, pids) => [...cpuMs(pids)].reduce((sum, [pid, ms]) => sum + ms - (before.get(pid) ?? 0), 0);
const procs = () =>
  readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map((pid) => {
      try {
        return { pid, cmd: readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0') };
      } catch {
        return { pid, cmd: [] };
      }
    });
// The server process itself (under npm), and every process of the PostgreSQL cluster.
const serverPid = (group, script) =>
  procs().find(
    (p) =>
      // node itself running the script (not the shell or cross-env that started it)
      /(^|\/)node$/.test(p.cmd[0] ?? '') &&
      !p.cmd.some((a) => a.includes('cross-env')) &&
      p.cmd.at(-2) === script &&
      stat(p.pid)?.[2] === String(group),
  )?.pid;
const postgresPids = () =>
  procs()
    .filter((p) => /(^|\/)postgres$/.test(p.cmd[0] ?? '') || (p.cmd[0] ?? '').startsWith('postgres:'))
    .map((p) => p.pid);

async function load(origin, makeRequest, seconds = SECONDS, conn = CONN, watch) {
  const cpu0 = watch && [cpuMs([watch]), cpuMs(postgresPids())];
  const lat = [];
  let errors = 0,
    i = 0;
  const until = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: conn }, async () => {
      while (Date.now() < until) {
        const { method, path, headers, body } = makeRequest(i++);
        try {
          const r = await request(origin, method, path, headers, body);
          if (r.status >= 300) errors++;
          else lat.push(r.ms);
        } catch {
          errors++;
        }
      }
    }),
  );
  lat.sort((a, b) => a - b);
  const q = (p) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] ?? NaN;
  const cpu = watch && {
    server_cpu_ms: cpuSince(cpu0[0], [watch]) / lat.length,
    postgres_cpu_ms: cpuSince(cpu0[1], postgresPids()) / lat.length,
  };
  return { rps: lat.length / seconds, p50: q(0.5), p99: q(0.99), errors, ...cpu };
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (_, x) => (typeof x === 'number' ? Math.round(x * 100) / 100 : x);

const db = await postgres();
const pool = new pg.Pool({ connectionString: db.url, max: 4 });
const castsyncPort = await freePort();
const origin = `http://127.0.0.1:${castsyncPort}`;
let castsync, floorProc, feedHosts;
// Started as a self-hoster starts it: `npm start`, with its node flags. The feed fetcher is off but for the
// backlog scenario: the bench's feeds are on hosts that do not exist.
const startCastsync = (extraEnv = { FEED_FETCH: 'false' }) =>
  startProcess(
    'npm',
    ['start', '--silent'],
    { DATABASE_URL: db.url, HOST: '127.0.0.1', PORT: String(castsyncPort), LOG_LEVEL: 'warn', ...extraEnv },
    async () => (await fetch(`${origin}/healthz`).catch(() => ({ status: 0 }))).status === 200,
  );
const stop = (p) =>
  p &&
  p.exitCode === null &&
  new Promise((r) => {
    p.once('exit', r);
    process.kill(-p.pid, 'SIGTERM');
  });
try {
  castsync = await startCastsync();

  const login = async (name) => {
    const session = await json(origin, 'POST', '/v1/auth/login', {}, { username: name, password: PASSWORD });
    if (session.status !== 200) throw new Error(`login ${name}: ${session.status}`);
    return {
      name,
      bearer: `Bearer ${session.body.access_token}`,
      basic: 'Basic ' + Buffer.from(`${name}:${PASSWORD}`).toString('base64'),
    };
  };
  // A since-sync that finds 5 changes: mark (the Sync-Timestamp of a GET), then send 5 of the user's feeds again.
  const markSince = async (user, feeds) => {
    user.since = (
      await json(origin, 'GET', '/v1/subscriptions?per_page=1', { authorization: user.bearer })
    ).headers.get('sync-timestamp');
    await sleep(2);
    const r = await json(
      origin,
      'POST',
      '/v1/subscriptions',
      { authorization: user.bearer },
      { subscriptions: feeds.map((feed_url) => ({ feed_url })) },
    );
    if (r.status !== 200 || r.body.success.length !== feeds.length) throw new Error(`since POST: ${r.status}`);
  };

  log(`seeding ${USERS} users x ${SUBS} subscriptions through the API ...`);
  const hash = await hashPassword(PASSWORD);
  const names = Array.from({ length: USERS }, (_, u) => `bench${u}`);
  await pool.query('INSERT INTO users (username, password_hash) SELECT unnest($1::text[]), $2', [names, hash]);
  const users = [];
  for (const [u, name] of names.entries()) {
    const user = await login(name);
    for (let off = 0; off < SUBS; off += 500) {
      const subs = Array.from({ length: Math.min(500, SUBS - off) }, (_, k) => ({
        feed_url: `https://feeds.bench.example/${u}/show-${off + k}/feed.xml`,
      }));
      const r = await json(
        origin,
        'POST',
        '/v1/subscriptions',
        { authorization: user.bearer },
        { subscriptions: subs },
      );
      if (r.status !== 200) throw new Error(`seed POST ${r.status}: ${JSON.stringify(r.body)}`);
    }
    await markSince(
      user,
      Array.from({ length: 5 }, (_, k) => `https://feeds.bench.example/${u}/show-${k * 100}/feed.xml`),
    );
    users.push(user);
  }
  await pool.query(`DROP SCHEMA IF EXISTS floor CASCADE; CREATE SCHEMA floor;
    CREATE TABLE floor.subs (id bigserial PRIMARY KEY, user_id int NOT NULL, feed_url text NOT NULL, guid uuid NOT NULL,
      is_subscribed bool NOT NULL, changed timestamptz NOT NULL, UNIQUE (user_id, feed_url));
    CREATE INDEX ON floor.subs (user_id, id);
    CREATE TABLE floor.tokens (token text PRIMARY KEY, user_id int NOT NULL);
    INSERT INTO floor.subs (user_id, feed_url, guid, is_subscribed, changed)
      SELECT u, 'https://feeds.bench.example/' || u || '/show-' || k || '/feed.xml', gen_random_uuid(), true, now()
      FROM generate_series(0, ${USERS - 1}) u, generate_series(0, ${SUBS - 1}) k;
    INSERT INTO floor.tokens SELECT 'floor-token-' || u, u FROM generate_series(0, ${USERS - 1}) u;`);
  await pool.query('VACUUM ANALYZE');
  const floorPort = await freePort();
  floorProc = await startProcess(
    process.execPath,
    [join(here, 'floor.mjs'), String(floorPort), db.url],
    {},
    async (out) => out.includes('floor ready'),
  );
  const floor = `http://127.0.0.1:${floorPort}`;
  const castsyncPid = serverPid(castsync.pid, 'dist/server.js');
  if (!castsyncPid) throw new Error('castsync server process not found');

  const pages = Math.max(1, Math.floor(SUBS / 50));
  const getPath = (i) => `/v1/subscriptions?page=${1 + (i % pages)}&per_page=50`;
  let seq = 0;
  const postBody = (tag) =>
    JSON.stringify({
      subscriptions: Array.from({ length: 100 }, (_, k) => ({
        feed_url: `https://new.bench.example/${tag}/${seq}/${k}.xml`,
      })),
    });
  // Pages of the users' records in turn, with their bearer tokens (or scheme 'basic': their passwords).
  const getPage =
    (list, scheme = 'bearer') =>
    (i) => ({
      method: 'GET',
      path: getPath(i),
      headers: { authorization: list[i % list.length][scheme] },
    });
  const getBearer = getPage(users);
  const sinceSync = (list) => (i) => {
    const u = list[i % list.length];
    return {
      method: 'GET',
      path: `/v1/subscriptions?since=${encodeURIComponent(u.since)}&per_page=50`,
      headers: { authorization: u.bearer },
    };
  };
  const scenarios = {
    'GET page of 50 (bearer)': {
      a: getBearer,
      b: (i) => ({ method: 'GET', path: getPath(i), headers: { authorization: `Bearer floor-token-${i % USERS}` } }),
    },
    'POST 100 new feeds': {
      a: (i) => ({
        method: 'POST',
        path: '/v1/subscriptions',
        headers: { authorization: users[i % USERS].bearer, 'content-type': 'application/json' },
        body: postBody(`a${seq++}`),
      }),
      b: (i) => ({
        method: 'POST',
        path: '/v1/subscriptions',
        headers: { authorization: `Bearer floor-token-${i % USERS}`, 'content-type': 'application/json' },
        body: postBody(`b${seq++}`),
      }),
    },
  };
  const results = {};
  for (const [name, s] of Object.entries(scenarios)) {
    log(`measuring ${name} ...`);
    const rows = [];
    for (let r = 0; r < ROUNDS; r++) {
      const a = await load(origin, s.a, SECONDS, CONN, castsyncPid);
      const b = await load(floor, s.b, SECONDS, CONN, floorProc.pid);
      rows.push({ a, b, ratio: a.rps / b.rps });
    }
    results[name] = {
      castsync_rps: median(rows.map((x) => x.a.rps)),
      floor_rps: median(rows.map((x) => x.b.rps)),
      ratio: median(rows.map((x) => x.ratio)),
      castsync_p99_ms: median(rows.map((x) => x.a.p99)),
      floor_p99_ms: median(rows.map((x) => x.b.p99)),
      p99_ratio: median(rows.map((x) => x.a.p99 / x.b.p99)),
      castsync_errors: rows.reduce((n, x) => n + x.a.errors, 0),
      // CPU per request: in the server process, and in PostgreSQL (all of the cluster's processes).
      castsync_cpu_ms: {
        server: median(rows.map((x) => x.a.server_cpu_ms)),
        postgres: median(rows.map((x) => x.a.postgres_cpu_ms)),
      },
      floor_cpu_ms: {
        server: median(rows.map((x) => x.b.server_cpu_ms)),
        postgres: median(rows.map((x) => x.b.postgres_cpu_ms)),
      },
    };
  }
  const rssOf = async () =>
    Number(
      (await (await fetch(`${origin}/metrics`)).text()).match(/^process_resident_memory_bytes (\d+)/m)?.[1] ?? NaN,
    ) /
    2 ** 20;
  log('measuring basic vs bearer ...');
  const basicGet = getPage(users, 'basic');
  // As ../shared/bench/compare.mjs measures it: right after the POSTs (tens of thousands of records per user by
  // then), one window of Basic, then one of bearer. Basic's window is its first: each user's password is
  // verified once (argon2, about 50 ms of CPU) before the cache answers, 20 hashes inside 6 seconds.
  const coldBasic = await load(origin, basicGet);
  const bearerAfter = await load(origin, getBearer);
  results['GET page of 50 (basic vs bearer)'] = {
    basic_rps: coldBasic.rps,
    bearer_rps: bearerAfter.rps,
    ratio: coldBasic.rps / bearerAfter.rps,
    errors: coldBasic.errors + bearerAfter.errors,
  };
  // Resident set after all of the load: GETs, POSTs and the first password verifications.
  results.castsync_rss_mib = await rssOf();

  // Then per request, once every password is verified: the POSTs' records removed again, so that this is
  // the same GET as the first scenario (1,000 records per user), in alternating pairs.
  await pool.query(`DELETE FROM subscriptions WHERE feed_url LIKE 'https://new.bench.example/%'`);
  await pool.query('VACUUM ANALYZE');
  // A server whose connections started while every user had tens of thousands of records keeps planning
  // the list statement on every GET once they are back to 1,000 (PostgreSQL weighs a prepared
  // statement's generic plan against the cost of the custom plans it made so far): 0.57 against 0.32 ms
  // a page, measured. A table does not shrink by 97 % under a real server; the bench restarts castsync so
  // that what follows meets connections made on the data it measures.
  await stop(castsync);
  // Keep-alive sockets to the old process are dead: a new agent for the new one.
  agent.destroy();
  agent = new http.Agent({ keepAlive: true, maxSockets: CONN });
  castsync = await startCastsync();
  // Untimed, so that neither side of the first pair meets a cold process (code not yet compiled, the pool's
  // connections not yet opened and their statements not prepared): a short load of each.
  for (const warmUp of [basicGet, getBearer]) {
    if ((await load(origin, warmUp, 2)).errors) throw new Error('warm-up after the restart: errors');
  }
  const pairs = [];
  for (let r = 0; r < ROUNDS; r++) {
    // Alternate which goes first, so that neither always meets a colder or warmer server.
    const first = r % 2 === 0 ? await load(origin, basicGet) : await load(origin, getBearer);
    const second = r % 2 === 0 ? await load(origin, getBearer) : await load(origin, basicGet);
    const [basic, bearer] = r % 2 === 0 ? [first, second] : [second, first];
    pairs.push({ basic, bearer, ratio: basic.rps / bearer.rps });
  }
  results['GET page of 50 (basic vs bearer, warm)'] = {
    basic_rps: median(pairs.map((x) => x.basic.rps)),
    bearer_rps: median(pairs.map((x) => x.bearer.rps)),
    ratio: median(pairs.map((x) => x.ratio)),
    errors: pairs.reduce((n, x) => n + x.basic.errors + x.bearer.errors, 0),
  };

  // urlHash() in SQL, for URLs that are their own matching key (lower-case scheme and host, a path).
  const URL_HASH = (url) => `encode(substring(sha256(convert_to(${url}, 'UTF8')) FROM 1 FOR 16), 'hex')::uuid`;

  // One user with BIG_SUBS records among the others, against one with SUBS: the first page, a since-sync
  // that finds 50 changes, and a POST of 100 new feeds, at 4 connections. A user's costs must not grow
  // with the user's size (a library imported from another service, or years of episode history).
  const sized = async (name, records) => {
    await pool.query('INSERT INTO users (username, password_hash) VALUES ($1, $2)', [name, hash]);
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
    const user = await login(name);
    const { id } = (await pool.query('SELECT id FROM users WHERE username = $1', [name])).rows[0];
    const step = Math.floor(records / 50);
    await markSince(
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
          body: postBody(`${name}-${seq++}`),
        }),
      ],
    ]) {
      const r = await load(origin, make, SECONDS, 4);
      figures[label] = { p50_ms: r.p50, p99_ms: r.p99, errors: r.errors };
    }
    return figures;
  };
  log(`measuring one user of ${BIG_SUBS} records against one of ${SUBS} ...`);
  const ofSmall = await sized('sized-small', SUBS);
  const ofBig = await sized('sized-big', BIG_SUBS);
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

  // The gpodder.net v2 door, against the equivalent /v1 request, in the same run: a pull that finds 50
  // changes of a user's 1,000 (with the session cookie, as AntennaPod and mygpoclient; and with Basic on
  // every request, as Kasts), and pushes of 100 and 1,000 new feeds (a first sync).
  log('measuring the gpodder API against /v1 ...');
  const ratioRow = (g, o) => ({
    gpodder_rps: g.rps,
    opa_rps: o.rps,
    ratio: g.rps / o.rps,
    gpodder_p99_ms: g.p99,
    opa_p99_ms: o.p99,
    errors: g.errors + o.errors,
  });
  const pullMark = Date.now();
  await sleep(1100);
  for (const [u, user] of users.entries()) {
    const login = await fetch(`${origin}/api/2/auth/${user.name}/login.json`, {
      method: 'POST',
      headers: { authorization: user.basic },
    });
    user.cookie = /sessionid=([^;]+)/.exec(login.headers.get('set-cookie') ?? '')?.[1];
    const r = await json(
      origin,
      'POST',
      '/v1/subscriptions',
      { authorization: user.bearer },
      {
        subscriptions: Array.from({ length: 50 }, (_, k) => ({
          feed_url: `https://feeds.bench.example/${u}/show-${k * 19}/feed.xml`,
        })),
      },
    );
    if (r.status !== 200) throw new Error(`gpodder mark POST ${r.status}`);
  }
  const pullSince = Math.ceil(pullMark / 1000);
  const opaSince = encodeURIComponent(new Date(pullMark).toISOString());
  const gpodderPull = (auth) => (i) => {
    const u = users[i % users.length];
    return {
      method: 'GET',
      path: `/api/2/subscriptions/${u.name}/bench.json?since=${pullSince}`,
      headers: auth === 'cookie' ? { cookie: `sessionid=${u.cookie}` } : { authorization: u.basic },
    };
  };
  const opaPull = (i) => ({
    method: 'GET',
    path: `/v1/subscriptions?since=${opaSince}&per_page=50`,
    headers: { authorization: users[i % users.length].bearer },
  });
  const check = await json(origin, 'GET', gpodderPull('basic')(0).path, { authorization: users[0].basic });
  if (check.body.add.length !== 50) throw new Error(`the gpodder pull found ${check.body.add.length} changes, not 50`);
  const pushBody = (n, tag) =>
    JSON.stringify({
      add: Array.from({ length: n }, (_, k) => `https://push.bench.example/${tag}/${seq}/${k}.xml`),
      remove: [],
    });
  const postBodyOf = (n, tag) =>
    JSON.stringify({
      subscriptions: Array.from({ length: n }, (_, k) => ({
        feed_url: `https://push.bench.example/${tag}/${seq}/${k}.xml`,
      })),
    });
  const gpodderPush = (n) => (i) => {
    const u = users[i % users.length];
    return {
      method: 'POST',
      path: `/api/2/subscriptions/${u.name}/bench.json`,
      headers: { cookie: `sessionid=${u.cookie}`, 'content-type': 'application/json' },
      body: pushBody(n, `g${n}-${seq++}`),
    };
  };
  const opaPush = (n) => (i) => ({
    method: 'POST',
    path: '/v1/subscriptions',
    headers: { authorization: users[i % users.length].bearer, 'content-type': 'application/json' },
    body: postBodyOf(n, `o${n}-${seq++}`),
  });
  const gpodderFigures = {};
  for (const [name, g, o] of [
    ['pull 50 changes (cookie)', gpodderPull('cookie'), opaPull],
    ['pull 50 changes (Basic every request)', gpodderPull('basic'), opaPull],
    ['push 100 new feeds', gpodderPush(100), opaPush(100)],
    ['push 1,000 new feeds', gpodderPush(1000), opaPush(1000)],
  ]) {
    const rows = [];
    for (let r = 0; r < ROUNDS; r++) rows.push([await load(origin, g), await load(origin, o)]);
    const mid = (f) => median(rows.map(f));
    gpodderFigures[name] = ratioRow(
      { rps: mid((x) => x[0].rps), p99: mid((x) => x[0].p99), errors: rows.reduce((n, x) => n + x[0].errors, 0) },
      { rps: mid((x) => x[1].rps), p99: mid((x) => x[1].p99), errors: rows.reduce((n, x) => n + x[1].errors, 0) },
    );
  }
  results['gpodder vs /v1'] = gpodderFigures;
  await pool.query(`DELETE FROM subscriptions WHERE feed_url LIKE 'https://push.bench.example/%'`);
  await pool.query('UPDATE users u SET record_count = (SELECT count(*) FROM subscriptions s WHERE s.user_id = u.id)');

  // Episode actions: a user with 20,000 actions over 200 podcasts (one episode each, a hundred plays of
  // it) against one with 200, at 16 connections: a batch of 30 plays (AntennaPod's), a since that finds 50
  // actions, and the aggregated view (200 episodes for both).
  log('measuring episode actions: 20,000 against 200 per user ...');
  const actionsOf = async (name, perEpisode) => {
    await pool.query('INSERT INTO users (username, password_hash) VALUES ($1, $2)', [name, hash]);
    const user = await login(name);
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
    for (let i = 0; i < all.length; i += 2000) {
      const r = await json(
        origin,
        'POST',
        `/api/2/episodes/${name}.json`,
        { authorization: user.basic },
        all.slice(i, i + 2000),
      );
      if (r.status !== 200) throw new Error(`episode seed ${r.status}`);
    }
    const mark = Date.now();
    await sleep(1100);
    const fifty = Array.from({ length: 50 }, (_, k) => ({
      ...all[k],
      timestamp: '2026-11-01T00:00:00',
      device: 'mark',
    }));
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
    const figures = {};
    // The reads first: the batches posted afterwards are changes after the mark.
    for (const [label, make] of [
      ['get_since_50', get(`since=${since}`)],
      ['get_aggregated', get('aggregated=true')],
      [
        'post_30_plays',
        () => ({
          method: 'POST',
          path: `/api/2/episodes/${name}.json`,
          headers: { authorization: user.basic, 'content-type': 'application/json' },
          body: JSON.stringify(
            Array.from({ length: 30 }, (_, k) => ({ ...all[k], timestamp: undefined, position: seq++ })),
          ),
        }),
      ],
    ]) {
      const r = await load(origin, make);
      figures[label] = { p50_ms: r.p50, p99_ms: r.p99, rps: r.rps, errors: r.errors };
    }
    return figures;
  };
  const fewActions = await actionsOf('actions-200', 1);
  const manyActions = await actionsOf('actions-20000', 100);
  results['episode actions, 20,000 vs 200 per user'] = Object.fromEntries(
    Object.keys(fewActions).map((k) => [
      k,
      {
        p50_ms: [fewActions[k].p50_ms, manyActions[k].p50_ms],
        p99_ms: [fewActions[k].p99_ms, manyActions[k].p99_ms],
        rps: [fewActions[k].rps, manyActions[k].rps],
        p50_ratio: manyActions[k].p50_ms / fewActions[k].p50_ms,
        errors: fewActions[k].errors + manyActions[k].errors,
      },
    ]),
  );

  // The APIs while the fetcher works through a backlog: a server with the fetcher on, 2,000 feeds due on 20
  // local hosts (bench/feeds.mjs: 68 KB feeds, 200 ms to answer), and windows of the same GET, since-sync and
  // POST with the backlog paused (made not due) and resumed, alternating. The POSTs send feeds castsync
  // knows already (new to the user), so that they add no fetches of their own to either window.
  log('measuring the APIs while the fetcher works through a backlog of 2,000 feeds ...');
  const feedPort = await freePort();
  feedHosts = await startProcess(
    process.execPath,
    [join(here, 'feeds.mjs'), String(feedPort), '20', '200'],
    {},
    async (out) => out.includes('feeds ready'),
  );
  const hostFeed = (k, path) => `http://127.0.0.${2 + (k % 20)}:${feedPort}/${path}.xml`;
  await pool.query(`UPDATE feeds SET next_fetch_at = now() + interval '1 day'`);
  const KNOWN = 300 * SECONDS * ROUNDS * 2 * 100;
  await pool.query(
    `INSERT INTO feeds (url_hash, feed_url, next_fetch_at)
     SELECT ${URL_HASH('f.url')}, f.url, now() + interval '1 day'
       FROM generate_series(1, $1::int) n, LATERAL (SELECT 'https://known.bench.example/' || n || '.xml' AS url) f
     ON CONFLICT DO NOTHING`,
    [KNOWN],
  );
  await pool.query('VACUUM ANALYZE feeds');
  let known = 0;
  await stop(castsync);
  agent.destroy();
  agent = new http.Agent({ keepAlive: true, maxSockets: CONN });
  castsync = await startCastsync({ FEED_FETCH: 'true', FEED_FETCH_ALLOW_CIDRS: '127.0.0.0/8' });
  const apiScenarios = {
    get: getBearer,
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
  await pool.query('INSERT INTO users (username, password_hash) VALUES ($1, $2)', ['backlog', hash]);
  const backlogUser = await login('backlog');
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
    // Due again, and a feed nobody had subscribed, which wakes the fetcher at once.
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
        const pid = serverPid(castsync.pid, 'dist/server.js');
        const before = await fetchedSoFar();
        const t0 = Date.now();
        const row = await load(origin, make, SECONDS, CONN, pid);
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
  };
  await stop(castsync);
  await stop(feedHosts);
  // The backlog's POSTs gave the 20 users tens of thousands of changes after the since mark: removed, so
  // that the scale phase's "before" is the same 1,000 records a user as the figures above.
  await pool.query(`DELETE FROM subscriptions WHERE feed_url LIKE 'https://known.bench.example/%'`);
  await pool.query('UPDATE users u SET record_count = (SELECT count(*) FROM subscriptions s WHERE s.user_id = u.id)');
  agent.destroy();
  agent = new http.Agent({ keepAlive: true, maxSockets: CONN });
  castsync = await startCastsync();

  // Latency at a moderate load (4 connections), before and after loading SCALE_USERS users.
  const latency = async (list) => ({
    get: await load(origin, getPage(list), SECONDS, 4),
    since: await load(origin, sinceSync(list), SECONDS, 4),
  });
  // The plans of the hot statements, as the repo functions send them (writes run in a rolled-back
  // transaction, so EXPLAIN ANALYZE changes nothing).
  const plans = async (userName) => {
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
      await explain(listRepo.listPage(explaining(`GET page ${pages} of 50`), userId, 50, (pages - 1) * 50));
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
  };
  if (SCALE_USERS > USERS) {
    log('measuring latency with the base data ...');
    const small = await latency(users);
    log(`loading ${SCALE_USERS - USERS} more users x ${SUBS} subscriptions with SQL, spread over the table ...`);
    const t0 = Date.now();
    await pool.query(
      `INSERT INTO users (username, password_hash) SELECT 'scale' || g, $1 FROM generate_series(1, $2::int) g`,
      [hash, SCALE_USERS - USERS],
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
      const user = await login(username);
      await markSince(
        user,
        Array.from({ length: 5 }, (_, k) => `https://feeds.scale.example/${id}/${k * 100}.xml`),
      );
      spreadUsers.push(user);
    }
    log('measuring latency with the scale data ...');
    const big = await latency(users);
    const spread = await latency(spreadUsers);
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
    results.plans = await plans(spreadRows[0].username);
  }
  results.castsync_rss_mib_end = await rssOf();

  console.log(
    `users=${USERS} subs/user=${SUBS} conn=${CONN} ${SECONDS}s x ${ROUNDS} rounds (castsync vs floor, alternating)`,
  );
  for (const [k, v] of Object.entries(results)) {
    if (k === 'plans') continue;
    console.log(k.padEnd(34), JSON.stringify(v, round));
  }
  // A hundred guids or hashes in a plan are shown by their number.
  const shorten = (plan) =>
    plan.replace(/'\{([^}']{200,})\}'/g, (_, list) => `'{...${list.split(',').length} values...}'`);
  if (results.plans) {
    for (const [k, v] of Object.entries(results.plans)) console.log(`\n-- plan: ${k}\n${shorten(v)}`);
  }
  const summary = { ...results };
  delete summary.plans;
  console.log(JSON.stringify({ bench: summary }, round));
} finally {
  await Promise.all([stop(floorProc), stop(castsync), stop(feedHosts)]);
  await pool.end();
  await db.stop();
  agent.destroy();
}
process.exit(0);
