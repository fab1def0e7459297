// castsync against the floor (bench/floor.mjs, the least code serving the same requests on the same stack):
// a GET page of 50 with a bearer token, and a POST of 100 feeds the user does not have, alternating.
import { getPage, getPath, newFeedsBody } from '../context.mjs';
import { CONN, load, log, median, ROUNDS, SECONDS, USERS } from '../lib.mjs';

export default async function floorScenario(ctx, results) {
  const { origin, users } = ctx;
  const { origin: floor, proc: floorProc } = await ctx.floor();
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
