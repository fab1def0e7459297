import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { feedServer, rss, xml } from '../helpers/feed-server';
import { basicAuth, call, cli, startServer } from '../helpers/process';

// The fetcher as `npm start` runs it: a new feed is fetched within seconds of the POST (not at the next
// minute's run), and a fetch that hangs never holds up a SIGTERM to the process group.

const auth = basicAuth('fay', 'fay-password');
let dataDir: string;
let fixture: Awaited<ReturnType<typeof feedServer>>;
let slowRequested: () => void;
const slowSeen = new Promise<void>((resolve) => (slowRequested = resolve));

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'castsync-fetcher-'));
  fs.chmodSync(dataDir, 0o755);
  expect(cli(['user', 'add', 'fay', '--password-stdin'], { DATA_DIR: dataDir }, 'fay-password\n').status).toBe(0);
  fixture = await feedServer({
    '/show.xml': xml(rss({ title: 'Fetched by the worker' })),
    '/hangs.xml': (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/rss+xml' });
      res.write('<rss>');
      slowRequested();
    },
  });
});
afterAll(async () => {
  await fixture.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test('a new feed is fetched at once; SIGTERM to the group does not wait for a fetch that hangs', async () => {
  const server = await startServer({ DATA_DIR: dataDir, FEED_FETCH_ALLOW_CIDRS: '127.0.0.0/8' });
  try {
    const posted = await call(server.origin, 'POST', '/v1/subscriptions', auth, {
      subscriptions: [{ feed_url: fixture.url('/show.xml') }],
    });
    const guid = posted.body.success[0].guid as string;
    let title: unknown = null;
    const until = Date.now() + 10_000;
    while (title === null && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 200));
      title = (await call(server.origin, 'GET', `/v1/feeds/${guid}`, auth)).body.title;
    }
    expect(title).toBe('Fetched by the worker');

    await call(server.origin, 'POST', '/v1/subscriptions', auth, {
      subscriptions: [{ feed_url: fixture.url('/hangs.xml') }],
    });
    // Within seconds, a second wake in a row included (the worker's own schedule runs once a minute).
    let timer: NodeJS.Timeout | undefined;
    const seen = await Promise.race([
      slowSeen.then(() => true),
      new Promise((r) => (timer = setTimeout(() => r(false), 10_000))),
    ]);
    clearTimeout(timer);
    expect(seen).toBe(true);
    const signalled = Date.now();
    server.kill('SIGTERM');
    const exit = await server.exited;
    expect(exit.code).toBe(0);
    // The fetch's own deadline is 30 s; exit 0 means the server stopped before SHUTDOWN_TIMEOUT (10 s).
    expect(server.log()).not.toMatch(/did not finish within SHUTDOWN_TIMEOUT/);
    expect(exit.at - signalled).toBeLessThan(10_000 + 3000);
  } finally {
    server.kill('SIGKILL');
  }
});
