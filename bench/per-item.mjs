// The cost per item of the two writes of many feeds: POST /v1/subscriptions of 100 never-seen feeds against
// POST /api/v1/sync of 30 subscribes of never-seen feeds, the same user, one request at a time, alternating,
// medians of N (60); and POST /v1/subscriptions of 30, the sync batch's size, for a request's fixed cost. From the project directory: `node bench/per-item.mjs` (the server as `npm start` runs
// it, with the shared harness of ../shared; SHARED_DIR says where it is otherwise).
import { randomUUID } from 'node:crypto';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const shared = resolve(process.env.SHARED_DIR ?? join(process.cwd(), '..', 'shared'));
const { startServer, createUser } = await import(pathToFileURL(join(shared, 'conformance', 'harness.mjs')).href);

const N = +(process.env.N ?? 60);
const server = await startServer({ extraEnv: { LOG_LEVEL: 'warn', FEED_FETCH: 'false' } });
try {
  const user = createUser(server, 'cost');
  const auth = 'Basic ' + Buffer.from(`${user.name}:${user.password}`).toString('base64');
  const post = async (path, body) => {
    const t0 = process.hrtime.bigint();
    const r = await fetch(server.origin + path, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    await r.text();
    if (r.status !== 200) throw new Error(`${path} ${r.status}`);
    return Number(process.hrtime.bigint() - t0) / 1e6;
  };
  let seq = 0;
  const v1 = (length = 100) =>
    post('/v1/subscriptions', {
      subscriptions: Array.from({ length }, (_, k) => ({
        feed_url: `https://v${length}.cost.example/${seq}/${k}.xml`,
      })),
    });
  const sync = () => {
    const at = new Date().toISOString();
    return post('/api/v1/sync', {
      requests: Array.from({ length: 30 }, (_, k) => ({
        type: 'subscription',
        action: 'subscribe',
        action_id: randomUUID(),
        occurred_at: at,
        data: { feed_url: `https://sync.cost.example/${seq}/${k}.xml` },
      })),
    });
  };
  // Warm: statements prepared, the credential cached.
  for (let i = 0; i < 10; i++, seq++) {
    await v1();
    await sync();
    await v1(30);
  }
  const a = [],
    b = [],
    c = [];
  for (let i = 0; i < N; i++, seq++) {
    a.push(await v1());
    b.push(await sync());
    c.push(await v1(30));
  }
  const med = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const r = { v1_100_ms: med(a), sync_30_ms: med(b), v1_30_ms: med(c) };
  Object.assign(r, { v1_per_item_ms: r.v1_100_ms / 100, sync_per_item_ms: r.sync_30_ms / 30 });
  r.ratio = r.sync_per_item_ms / r.v1_per_item_ms;
  r.ratio_at_30 = r.sync_30_ms / r.v1_30_ms;
  console.log(JSON.stringify(r));
} finally {
  await server.stop();
}
