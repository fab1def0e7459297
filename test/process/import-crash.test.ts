import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { feedServer } from '../helpers/feed-server';
import { basicAuth, browser, call, cli, startServer, type ServerProcess } from '../helpers/process';

// An import started on the web page survives kill -9 of the whole process group: its job runs again
// after the restart, finishes it, and the page says it was resumed.

let dataDir: string;
beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'castsync-import-crash-'));
  expect(cli(['user', 'add', 'ada', '--password-stdin'], { DATA_DIR: dataDir }, 'ada-password\n').status).toBe(0);
});
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

test('kill -9 while an import reads the other server: after the restart it is done, and says it was resumed', async () => {
  let first = true;
  const remote = await feedServer({
    '/index.php/apps/gpoddersync/subscriptions': (_req, res) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ add: ['https://crash.example/feed'], remove: [] })),
    '/index.php/apps/gpoddersync/episode_action': (_req, res) => {
      const answer = () =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            actions: [
              {
                podcast: 'https://crash.example/feed',
                episode: 'https://crash.example/1.mp3',
                action: 'PLAY',
                position: 42,
                timestamp: '2024-01-01T00:00:00+00:00',
              },
            ],
          }),
        );
      // The first answer comes too late for the server that asked: it is killed while it waits.
      if (first) setTimeout(answer, 3000).unref();
      else answer();
      first = false;
    },
  });
  const env = { DATA_DIR: dataDir, IMPORT_ALLOW_PRIVATE: 'true', FEED_FETCH: 'false' };
  let server: ServerProcess | undefined = await startServer(env);
  try {
    const b = browser(server.origin);
    const signIn = await b.send('/');
    expect(
      (await b.send('/web/sign-in', { _csrf: b.token(signIn.text), username: 'ada', password: 'ada-password' })).status,
    ).toBe(303);
    const page = await b.send('/web/moving');
    const started = await b.send('/web/import', {
      _csrf: b.token(page.text),
      source: 'nextcloud',
      server_url: remote.url(''),
      remote_user: 'ada',
      password: 'nc-app-password',
      action: 'import',
    });
    expect(started.status).toBe(303);
    for (let i = 0; i < 200 && !remote.requests.some((r) => r.path.endsWith('/episode_action')); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await b.send('/web/moving')).text).toContain('Running: reading episode actions.');
    server.kill('SIGKILL');
    await server.exited;

    server = await startServer(env);
    b.withOrigin(server.origin);
    let text = '';
    for (let i = 0; i < 100 && !text.includes('Done: imported'); i++) {
      await new Promise((r) => setTimeout(r, 200));
      text = (await b.send('/web/moving')).text;
    }
    expect(text).toMatch(
      /Done: imported\s+1 new of 1 feeds, 1 new of 1 episode actions[^<]*\(resumed after a restart\)/,
    );
    const feeds = await call(server.origin, 'GET', '/subscriptions/ada.json', basicAuth('ada', 'ada-password'));
    expect(feeds.body).toEqual(['https://crash.example/feed']);
  } finally {
    server?.kill('SIGTERM');
    await server?.exited;
    await remote.close();
  }
});
