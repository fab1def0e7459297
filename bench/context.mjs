// The benchmark's running world, shared by the scenarios: PostgreSQL, castsync started as `npm start`,
// the users seeded through the API, and the request shapes several scenarios use.
import { join } from 'node:path';
import pg from 'pg';
import {
  CONN,
  here,
  json,
  log,
  PASSWORD,
  postgres,
  require,
  resetAgent,
  serverPid,
  sleep,
  startProcess,
  stop,
  SUBS,
  USERS,
} from './lib.mjs';

const { freePort } = require('./dist/db/embedded.js');
const { hashPassword } = require('./dist/auth/secrets.js');

export async function createContext() {
  const db = await postgres();
  const pool = new pg.Pool({ connectionString: db.url, max: 4 });
  // pool.end() resolves before its connections have closed; stopping PostgreSQL right after ends them, and
  // an error on a pool with no listener would throw out of the bench.
  pool.on('error', () => undefined);
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const hash = await hashPassword(PASSWORD);
  let seq = 0;
  let floorRun;
  const ctx = {
    db,
    pool,
    origin,
    /** The password hash every bench user has. */
    hash,
    /** The running castsync process (its group leader: npm). */
    castsync: undefined,
    /** Other processes a scenario started, stopped at the end. */
    others: [],
    users: [],
    /** A number no request of this run had: keeps new feed URLs new. */
    next: () => seq++,
    /**
     * castsync as a self-hoster starts it: `npm start`, with its node flags. The feed fetcher is off but for
     * the backlog scenario: the bench's feeds are on hosts that do not exist.
     */
    async start(extraEnv = { FEED_FETCH: 'false' }) {
      ctx.castsync = await startProcess(
        'npm',
        ['start', '--silent'],
        { DATABASE_URL: db.url, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', ...extraEnv },
        async () => (await fetch(`${origin}/healthz`).catch(() => ({ status: 0 }))).status === 200,
      );
      return ctx.castsync;
    },
    /** A new castsync process (and a new agent: keep-alive sockets to the old one are dead). */
    async restart(extraEnv) {
      await stop(ctx.castsync);
      resetAgent();
      return ctx.start(extraEnv);
    },
    /** The node process serving castsync (under npm), for its CPU time. */
    serverPid: () => serverPid(ctx.castsync.pid, 'dist/server.js'),
    async login(name) {
      const session = await json(origin, 'POST', '/v1/auth/login', {}, { username: name, password: PASSWORD });
      if (session.status !== 200) throw new Error(`login ${name}: ${session.status}`);
      return {
        name,
        bearer: `Bearer ${session.body.access_token}`,
        basic: 'Basic ' + Buffer.from(`${name}:${PASSWORD}`).toString('base64'),
      };
    },
    /** A since-sync that finds these changes: mark (the Sync-Timestamp of a GET), then send these feeds again. */
    async markSince(user, feeds) {
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
    },
    /** The floor (bench/floor.mjs) on this database, started once: its tables, then its process. */
    async floor() {
      if (floorRun) return floorRun;
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
      const proc = await startProcess(
        process.execPath,
        [join(here, 'floor.mjs'), String(floorPort), db.url],
        {},
        async (out) => out.includes('floor ready'),
      );
      ctx.others.push(proc);
      floorRun = { origin: `http://127.0.0.1:${floorPort}`, proc };
      return floorRun;
    },
    /** Resident memory of the castsync process, in MiB (from /metrics). */
    rss: async () =>
      Number(
        (await (await fetch(`${origin}/metrics`)).text()).match(/^process_resident_memory_bytes (\d+)/m)?.[1] ?? NaN,
      ) /
      2 ** 20,
    async close() {
      await Promise.all([stop(ctx.castsync), ...ctx.others.map(stop)]);
      await pool.end();
      await db.stop();
      resetAgent();
    },
  };
  return ctx;
}

/** USERS users with SUBS subscriptions each, through the API, each with a since mark that finds 5 changes. */
export async function seedUsers(ctx) {
  log(`seeding ${USERS} users x ${SUBS} subscriptions through the API ...`);
  const names = Array.from({ length: USERS }, (_, u) => `bench${u}`);
  await ctx.pool.query('INSERT INTO users (username, password_hash) SELECT unnest($1::text[]), $2', [names, ctx.hash]);
  for (const [u, name] of names.entries()) {
    const user = await ctx.login(name);
    for (let off = 0; off < SUBS; off += 500) {
      const subs = Array.from({ length: Math.min(500, SUBS - off) }, (_, k) => ({
        feed_url: `https://feeds.bench.example/${u}/show-${off + k}/feed.xml`,
      }));
      const r = await json(
        ctx.origin,
        'POST',
        '/v1/subscriptions',
        { authorization: user.bearer },
        { subscriptions: subs },
      );
      if (r.status !== 200) throw new Error(`seed POST ${r.status}: ${JSON.stringify(r.body)}`);
    }
    await ctx.markSince(
      user,
      Array.from({ length: 5 }, (_, k) => `https://feeds.bench.example/${u}/show-${k * 100}/feed.xml`),
    );
    ctx.users.push(user);
  }
}

const pages = Math.max(1, Math.floor(SUBS / 50));
/** A page of 50 of a user's records, the i-th request's. */
export const getPath = (i) => `/v1/subscriptions?page=${1 + (i % pages)}&per_page=50`;
/** The number of pages of 50 of a seeded user. */
export const PAGES = pages;

/** Pages of the users' records in turn, with their bearer tokens (or scheme 'basic': their passwords). */
export const getPage =
  (list, scheme = 'bearer') =>
  (i) => ({ method: 'GET', path: getPath(i), headers: { authorization: list[i % list.length][scheme] } });

/** A since-sync of each user in turn, from the user's mark. */
export const sinceSync = (list) => (i) => {
  const u = list[i % list.length];
  return {
    method: 'GET',
    path: `/v1/subscriptions?since=${encodeURIComponent(u.since)}&per_page=50`,
    headers: { authorization: u.bearer },
  };
};

/** A POST body of n feeds nobody has, under this tag. */
export const newFeedsBody = (ctx, tag, n = 100, host = 'new.bench.example') =>
  JSON.stringify({
    subscriptions: Array.from({ length: n }, (_, k) => ({ feed_url: `https://${host}/${tag}/${ctx.next()}/${k}.xml` })),
  });

export { CONN };
