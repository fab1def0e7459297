// The cost per item of the two writes of many feeds, one request at a time, medians of `n` (in blocks of
// each kind, the kinds in turn; with the server's pid, the CPU of each block, the server's and PostgreSQL's):
// POST /v1/subscriptions of 100 never-seen feeds, POST /api/v1/sync of 30 subscribes of never-seen feeds
// (the draft's largest batch), and POST /v1/subscriptions of 30 (the batch's size, for a request's fixed
// cost); and each of one feed, so that what an item adds to a request (the difference per item between
// the large and the one-feed request) is told apart from what every request costs. Used by the opa-sync
// scenario of `npm run bench` and by `node bench/per-item.mjs`.
import { randomUUID } from 'node:crypto';
import { cpuNow, cpuUsed } from './lib.mjs';

/** Medians in ms, per item, and the sync batch's cost per item ÷ /v1's (at 100, and at 30). */
export async function perItemCost(origin, authorization, { n = 240, tag = 'cost', watch } = {}) {
  const post = async (path, body) => {
    const t0 = process.hrtime.bigint();
    const r = await fetch(origin + path, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    await r.text();
    if (r.status !== 200) throw new Error(`${path} ${r.status}`);
    return Number(process.hrtime.bigint() - t0) / 1e6;
  };
  let seq = 0;
  const v1 = (length) =>
    post('/v1/subscriptions', {
      subscriptions: Array.from({ length }, (_, k) => ({
        feed_url: `https://v${length}.${tag}.example/${seq}/${k}.xml`,
      })),
    });
  const sync = (length = 30) => {
    const at = new Date().toISOString();
    return post('/api/v1/sync', {
      requests: Array.from({ length }, (_, k) => ({
        type: 'subscription',
        action: 'subscribe',
        action_id: randomUUID(),
        occurred_at: at,
        data: { feed_url: `https://sync${length}.${tag}.example/${seq}/${k}.xml` },
      })),
    });
  };
  const kinds = {
    v1_100: () => v1(100),
    sync_30: () => sync(30),
    v1_30: () => v1(30),
    v1_1: () => v1(1),
    sync_1: () => sync(1),
  };
  // Warm: statements prepared, the credential cached.
  for (let i = 0; i < 10; i++, seq++) for (const run of Object.values(kinds)) await run();
  // In blocks of each kind, the kinds in turn, so that the CPU the server and PostgreSQL use in a block is
  // that kind's (`watch`: the server's pid).
  const times = {};
  const cpu = {};
  for (const k of Object.keys(kinds)) {
    times[k] = [];
    cpu[k] = { server: 0, postgres: 0 };
  }
  const rounds = 6;
  for (let round = 0; round < rounds; round++) {
    for (const [k, run] of Object.entries(kinds)) {
      const before = watch && cpuNow(watch);
      for (let i = 0; i < Math.ceil(n / rounds); i++, seq++) times[k].push(await run());
      if (watch) {
        const used = cpuUsed(watch, before);
        cpu[k].server += used.server;
        cpu[k].postgres += used.postgres;
      }
    }
  }
  const med = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const r = {};
  for (const k of Object.keys(kinds)) r[`${k}_ms`] = med(times[k]);
  Object.assign(r, { v1_per_item_ms: r.v1_100_ms / 100, sync_per_item_ms: r.sync_30_ms / 30 });
  r.ratio = r.sync_per_item_ms / r.v1_per_item_ms;
  r.ratio_at_30 = r.sync_30_ms / r.v1_30_ms;
  // What an item adds, in µs: the slope between the request of one and the large one.
  const slope = (one, large, items) => ((large - one) / (items - 1)) * 1000;
  r.v1_added_us = slope(r.v1_1_ms, r.v1_100_ms, 100);
  r.sync_added_us = slope(r.sync_1_ms, r.sync_30_ms, 30);
  r.added_ratio = r.sync_added_us / r.v1_added_us;
  if (watch) {
    // The same slopes in CPU, of the server and of PostgreSQL, from each kind's mean.
    const mean = (k, of) => cpu[k][of] / times[k].length;
    for (const of of ['server', 'postgres']) {
      r[`v1_${of}_added_us`] = slope(mean('v1_1', of), mean('v1_100', of), 100);
      r[`sync_${of}_added_us`] = slope(mean('sync_1', of), mean('sync_30', of), 30);
    }
    r.cpu_added_ratio =
      (r.sync_server_added_us + r.sync_postgres_added_us) / (r.v1_server_added_us + r.v1_postgres_added_us);
  }
  return r;
}
