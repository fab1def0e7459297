// The cost per item of the two writes of many feeds, one request at a time, alternating, medians of `n`:
// POST /v1/subscriptions of 100 never-seen feeds, POST /api/v1/sync of 30 subscribes of never-seen feeds
// (the draft's largest batch), and POST /v1/subscriptions of 30 (the batch's size, for a request's fixed
// cost); and each of one feed, so that what an item adds to a request (the difference per item between
// the large and the one-feed request) is told apart from what every request costs. Used by the opa-sync
// scenario of `npm run bench` and by `node bench/per-item.mjs`.
import { randomUUID } from 'node:crypto';

/** Medians in ms, per item, and the sync batch's cost per item ÷ /v1's (at 100, and at 30). */
export async function perItemCost(origin, authorization, { n = 60, tag = 'cost' } = {}) {
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
  // Warm: statements prepared, the credential cached.
  for (let i = 0; i < 10; i++, seq++) {
    await v1(100);
    await sync();
    await v1(30);
    await v1(1);
    await sync(1);
  }
  const a = [],
    b = [],
    c = [],
    d = [],
    e = [];
  for (let i = 0; i < n; i++, seq++) {
    a.push(await v1(100));
    b.push(await sync());
    c.push(await v1(30));
    d.push(await v1(1));
    e.push(await sync(1));
  }
  const med = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const r = { v1_100_ms: med(a), sync_30_ms: med(b), v1_30_ms: med(c), v1_1_ms: med(d), sync_1_ms: med(e) };
  Object.assign(r, { v1_per_item_ms: r.v1_100_ms / 100, sync_per_item_ms: r.sync_30_ms / 30 });
  r.ratio = r.sync_per_item_ms / r.v1_per_item_ms;
  r.ratio_at_30 = r.sync_30_ms / r.v1_30_ms;
  // What an item adds, in µs: the slope between the request of one and the large one.
  r.v1_added_us = ((r.v1_100_ms - r.v1_1_ms) / 99) * 1000;
  r.sync_added_us = ((r.sync_30_ms - r.sync_1_ms) / 29) * 1000;
  r.added_ratio = r.sync_added_us / r.v1_added_us;
  return r;
}
