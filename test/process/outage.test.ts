import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  basicAuth,
  call,
  deletionOutcome,
  cli,
  startCluster,
  startServer,
  stopServer,
  type Cluster,
  type ServerProcess,
} from '../helpers/process';

// The database goes away under a running server and comes back: 503s meanwhile, then full recovery.
const dataDir = mkdtempSync(path.join(tmpdir(), 'castsync-outage-'));
let cluster: Cluster | undefined;
let server: ServerProcess | undefined;
const auth = basicAuth('olga', 'olga-password');

afterAll(async () => {
  if (server) await stopServer(server);
  await cluster?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('database loss: quick 503s, no crash, recovery on its own, no acknowledged write lost', async () => {
  cluster = await startCluster(dataDir);
  const { port } = cluster;
  const env = { DATABASE_URL: cluster.url };
  expect(cli(['user', 'add', 'olga', '--password-stdin'], env, 'olga-password\n').status).toBe(0);
  server = await startServer(env);
  const acknowledged: string[] = [];
  for (let i = 0; i < 20; i++) {
    const url = `https://outage.example/${i}.xml`;
    const r = await call(server.origin, 'POST', '/v1/subscriptions', auth, { subscriptions: [{ feed_url: url }] });
    if (r.status === 200) acknowledged.push(url);
  }
  expect(acknowledged).toHaveLength(20);

  await cluster.stop();
  cluster = undefined;
  let slowest503 = 0;
  for (const [method, p, body] of [
    ['GET', '/v1/subscriptions', undefined],
    ['POST', '/v1/subscriptions', { subscriptions: [{ feed_url: 'https://outage.example/lost.xml' }] }],
    ['GET', '/readyz', undefined],
  ] as const) {
    const t0 = Date.now();
    const r = await call(server.origin, method, p, auth, body).catch((err: unknown) => {
      throw new Error(`no answer (${String(err)}); the server's log:\n${server!.log()}`);
    });
    expect({ status: r.status, body: r.body }).toEqual({
      status: 503,
      body: { code: '503', message: expect.any(String) },
    });
    slowest503 = Math.max(slowest503, Date.now() - t0);
    expect(Date.now() - t0).toBeLessThan(3000);
  }
  expect((await call(server.origin, 'GET', '/healthz')).status).toBe(200);
  // A user whose credentials are not cached yet is told the same, not "unauthorized".
  expect((await call(server.origin, 'GET', '/v1/subscriptions', basicAuth('someone', 'else-pass'))).status).toBe(503);

  const down503 = Date.now();
  // On its port again, which the server's DATABASE_URL names.
  cluster = await startCluster(dataDir, port);
  const back = Date.now();
  let status = 0;
  for (let i = 0; i < 100 && status !== 200; i++) {
    await new Promise((r) => setTimeout(r, 200));
    status = (await call(server.origin, 'GET', '/readyz')).status;
  }
  expect(status).toBe(200);
  process.stderr.write(
    `reliability: database outage: 503 within ${slowest503} ms; ready again ${Date.now() - back} ms after the database (${back - down503} ms to restart it); acknowledged ${acknowledged.length}, lost `,
  );
  const post = await call(server.origin, 'POST', '/v1/subscriptions', auth, {
    subscriptions: [{ feed_url: 'https://outage.example/after.xml' }],
  });
  expect(post.status).toBe(200);
  const list = await call(server.origin, 'GET', '/v1/subscriptions?per_page=500', auth);
  const stored = new Set(list.body.subscriptions.map((s: { feed_url: string }) => s.feed_url));
  process.stderr.write(`${acknowledged.filter((u) => !stored.has(u)).length}\n`);
  expect(acknowledged.filter((u) => !stored.has(u))).toEqual([]);
  expect(stored.has('https://outage.example/after.xml')).toBe(true);
  expect(stored.has('https://outage.example/lost.xml')).toBe(false);
  // The job worker recovered too.
  const guid = list.body.subscriptions[0].guid;
  const d = await call(server.origin, 'DELETE', `/v1/subscriptions/${guid}`, auth);
  expect(d.status).toBe(202);
  expect(await deletionOutcome(server.origin, auth, d.body.deletion_id)).toBe('SUCCESS');
});
