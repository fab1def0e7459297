import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { freshDatabase } from '../helpers/db';
import {
  allFeedUrls,
  basicAuth,
  call,
  cli,
  deletionOutcome,
  startServer,
  stopServer,
  type ServerProcess,
} from '../helpers/process';

// High availability as deploy/kubernetes-ha runs it (docs/scaling.md): two web instances (WORKER=false)
// behind a load balancer and one worker instance, on one database. One web instance is stopped in the
// middle of the traffic, as Kubernetes stops a pod: no request is lost; the balancer only sends again the
// connections the stopped instance refused, to the other one, as a Service's client does.

let database: Awaited<ReturnType<typeof freshDatabase>>;
let web: ServerProcess[] = [];
let worker: ServerProcess;
/** The servers that exited already: never signalled again. */
const gone = new Set<ServerProcess>();
const auth = basicAuth('hal', 'hal-password');

beforeAll(async () => {
  database = await freshDatabase();
  const env = { DATABASE_URL: database.url, FEED_FETCH: 'false' };
  expect(cli(['user', 'add', 'hal', '--password-stdin'], env, 'hal-password\n').status).toBe(0);
  web = await Promise.all([0, 1].map(() => startServer({ ...env, WORKER: 'false' })));
  worker = await startServer({ ...env, WORKER: 'true' });
}, 180_000);
afterAll(async () => {
  await Promise.all([...web, worker].filter((s) => s && !gone.has(s)).map((s) => stopServer(s)));
  await database.drop();
});

type Answer = { status: number; headers: http.OutgoingHttpHeaders; body: Buffer };
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding']);

/** One request sent to one instance, with keep-alive connections as a proxy keeps them. */
function forward(agent: http.Agent, origin: string, req: http.IncomingMessage, body: Buffer): Promise<Answer> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const out = http.request(
      {
        agent,
        hostname,
        port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: `${hostname}:${port}` },
      },
      (up) => {
        const chunks: Buffer[] = [];
        up.on('data', (d: Buffer) => chunks.push(d));
        up.on('error', reject);
        up.on('end', () => {
          const headers = Object.fromEntries(Object.entries(up.headers).filter(([h]) => !HOP_BY_HOP.has(h)));
          resolve({ status: up.statusCode!, headers, body: Buffer.concat(chunks) });
        });
      },
    );
    out.on('error', (err: NodeJS.ErrnoException) => reject(Object.assign(err, { reused: out.reusedSocket })));
    out.end(body);
  });
}

/**
 * A load balancer on loopback: each request to the next instance in turn; a connection an instance refuses
 * (it is not listening: the request never reached it) is sent to the next one. So is a request that met a
 * reset on a kept-alive connection before any answer (`reusedSocket`): a draining instance closes the
 * connections that are idle a second after it stops listening, and a request sent on one at that moment
 * was never read, the race of every HTTP/1.1 server that closes an idle connection; OkHttp sends such a
 * request again, and Node's documentation of `request.reusedSocket` does the same. A reset of a new
 * connection goes to the next instance: the kernel resets the connections still waiting to be accepted
 * when an instance stops listening (under load, a few may wait), and none of them was read. Any other
 * error is a failure (a 502), never sent again. That a reset request was never begun is checked apart:
 * castsync cuts a connection with a request on it only at its drain deadline, and the stopped instance
 * must not reach it.
 */
async function balancer(origins: string[]) {
  const agent = new http.Agent({ keepAlive: true });
  const seen = { retried: 0, stale: 0, unaccepted: 0, failed: [] as string[] };
  let turn = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', async () => {
      const first = turn++;
      for (let k = 0; k < origins.length; k++) {
        try {
          const answer = await forward(agent, origins[(first + k) % origins.length]!, req, Buffer.concat(chunks));
          res.writeHead(answer.status, answer.headers).end(answer.body);
          return;
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code ?? String(err);
          if (code === 'ECONNREFUSED') {
            seen.retried++;
            continue;
          }
          if (code === 'ECONNRESET' && (err as { reused?: boolean }).reused) {
            seen.stale++;
            k--; // the same instance, on a new connection
            continue;
          }
          if (code === 'ECONNRESET') {
            seen.unaccepted++;
            continue;
          }
          seen.failed.push(`${req.method} ${req.url}: ${code} reused=${(err as { reused?: boolean }).reused}`);
          break;
        }
      }
      res.writeHead(502).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => {
      agent.destroy();
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** What the clients were told was stored: feeds (gpodder and the Open Podcast API) and played episodes. */
type Acknowledged = { feeds: string[]; plays: string[]; wrong: string[] };

/**
 * One client's loop until `running()` is false: in turn a gpodder subscription upload, an Open Podcast API
 * subscription and a gpodder play, each answer checked; what was acknowledged is recorded.
 */
async function client(origin: string, c: number, running: () => boolean, out: Acknowledged): Promise<void> {
  for (let i = 0; running(); i++) {
    const feed = `https://ha.example/${c}/${i}.xml`;
    if (i % 3 === 0) {
      const r = await call(origin, 'POST', '/api/2/subscriptions/hal/phone.json', auth, { add: [feed], remove: [] });
      if (r.status === 200 && typeof r.body.timestamp === 'number') out.feeds.push(feed);
      else out.wrong.push(`gpodder subscriptions: ${r.status} ${JSON.stringify(r.body)}`);
    } else if (i % 3 === 1) {
      const r = await call(origin, 'POST', '/v1/subscriptions', auth, { subscriptions: [{ feed_url: feed }] });
      if (r.status === 200 && r.body.success?.[0]?.feed_url === feed) out.feeds.push(feed);
      else out.wrong.push(`OPA subscriptions: ${r.status} ${JSON.stringify(r.body)}`);
    } else {
      const episode = `https://ha.example/${c}/${i}.mp3`;
      const play = { podcast: feed, episode, action: 'play', position: i, started: 0, total: 600, device: 'phone' };
      const r = await call(origin, 'POST', '/api/2/episodes/hal.json', auth, [play]);
      if (r.status === 200 && typeof r.body.timestamp === 'number') out.plays.push(episode);
      else out.wrong.push(`gpodder episodes: ${r.status} ${JSON.stringify(r.body)}`);
    }
  }
}

test('a web instance stopped mid-traffic loses no request: the balancer only retries the connections it refuses', async () => {
  const lb = await balancer(web.map((s) => s.origin));
  try {
    const doomed = 'https://ha.example/deleted.xml';
    const made = await call(lb.origin, 'POST', '/v1/subscriptions', auth, { subscriptions: [{ feed_url: doomed }] });
    expect(made.status).toBe(200);
    const out: Acknowledged = { feeds: [], plays: [], wrong: [] };
    let running = true;
    const clients = Array.from({ length: 6 }, (_, c) => client(lb.origin, c, () => running, out));
    await new Promise((r) => setTimeout(r, 1500));
    const [stopped, kept] = web as [ServerProcess, ServerProcess];
    const before = out.feeds.length + out.plays.length;
    // As Kubernetes ends a pod: SIGTERM to its process group; it drains what it has accepted, and exits.
    stopped.kill('SIGTERM');
    const exit = await stopped.exited;
    gone.add(stopped);
    // The traffic goes on until the balancer has met the closed instance (and a little after).
    for (let i = 0; i < 100 && lb.seen.retried < 5; i++) await new Promise((r) => setTimeout(r, 100));
    // A deletion accepted now (by the web instance left) is done by the worker instance.
    const deletion = await call(lb.origin, 'DELETE', `/v1/subscriptions/${made.body.success[0].guid}`, auth);
    expect(deletion.status).toBe(202);
    running = false;
    await Promise.all(clients);
    process.stderr.write(
      `high availability: ${out.feeds.length + out.plays.length} requests answered (${before} before the stop), ` +
        `${lb.seen.retried} refused connections sent to the other instance, ` +
        `${lb.seen.stale} closed idle connections sent again, ${lb.seen.unaccepted} reset before being ` +
        `accepted sent to the other instance, exit ${exit.code}\n`,
    );
    expect([...out.wrong, ...lb.seen.failed]).toEqual([]);
    expect(exit.code).toBe(0);
    // It cut no request it had begun: it cuts them only at its drain deadline, which it did not reach.
    expect(stopped.log()).not.toMatch(/drain deadline/);
    expect(lb.seen.retried).toBeGreaterThan(0);
    expect(out.feeds.length + out.plays.length).toBeGreaterThan(before);

    // Every acknowledged write is there, read through the instance left and through the worker's.
    expect(await deletionOutcome(lb.origin, auth, deletion.body.deletion_id)).toBe('SUCCESS');
    for (const origin of [kept.origin, worker.origin]) {
      const feeds = await allFeedUrls(origin, auth);
      expect(out.feeds.filter((f) => !feeds.has(f))).toEqual([]);
    }
    expect((await call(kept.origin, 'GET', `/v1/subscriptions/${made.body.success[0].guid}`, auth)).status).toBe(410);
    const actions = await call(kept.origin, 'GET', '/api/2/episodes/hal.json?since=0', auth);
    const played = new Set((actions.body.actions as { episode: string }[]).map((a) => a.episode));
    expect(out.plays.filter((e) => !played.has(e))).toEqual([]);
  } finally {
    await lb.close();
  }
});
