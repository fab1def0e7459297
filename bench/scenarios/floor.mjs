// castsync against the floor (bench/floor.mjs, the least code serving the same requests on the same stack):
// a GET page of 50 with a bearer token, and a POST of 100 feeds the user does not have, alternating.
import { join } from 'node:path';
import { getPage, getPath, newFeedsBody } from '../context.mjs';
import { CONN, here, load, log, median, require, ROUNDS, SECONDS, startProcess, SUBS, USERS } from '../lib.mjs';

const { freePort } = require('./dist/db/embedded.js');

export default async function floorScenario(ctx, results) {
  const { pool, origin, users } = ctx;
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
  const floorProc = await startProcess(
    process.execPath,
    [join(here, 'floor.mjs'), String(floorPort), ctx.db.url],
    {},
    async (out) => out.includes('floor ready'),
  );
  ctx.others.push(floorProc);
  const floor = `http://127.0.0.1:${floorPort}`;
  const castsyncPid = ctx.serverPid();
  if (!castsyncPid) throw new Error('castsync server process not found');
  const post = (authorization, tag) => ({
    method: 'POST',
    path: '/v1/subscriptions',
    headers: { authorization, 'content-type': 'application/json' },
    body: newFeedsBody(ctx, tag),
  });
  const scenarios = {
    'GET page of 50 (bearer)': {
      a: getPage(users),
      b: (i) => ({ method: 'GET', path: getPath(i), headers: { authorization: `Bearer floor-token-${i % USERS}` } }),
    },
    'POST 100 new feeds': {
      a: (i) => post(users[i % USERS].bearer, 'a'),
      b: (i) => post(`Bearer floor-token-${i % USERS}`, 'b'),
    },
  };
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
}
