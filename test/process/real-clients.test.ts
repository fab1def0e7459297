import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freshDatabase } from '../helpers/db';
import { basicAuth, call, cli, startServer, stopServer } from '../helpers/process';

// The real gpodder.net clients, as Debian ships them (python3-mygpoclient, gpodder; .ci/run installs
// them with apt): mygpoclient's API client, and gPodder's own sync worker, headless.

let database: Awaited<ReturnType<typeof freshDatabase>>;
beforeAll(async () => {
  database = await freshDatabase();
});
afterAll(() => database.drop());

test('mygpoclient and gPodder sync against castsync, and /v1 sees the one list they share', async () => {
  const env = { DATABASE_URL: database.url };
  expect(cli(['user', 'add', 'real', '--password-stdin'], env, 'real-password\n').status).toBe(0);
  const server = await startServer(env);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'castsync-clients-'));
  try {
    await call(server.origin, 'POST', '/v1/subscriptions', basicAuth('real', 'real-password'), {
      subscriptions: [{ feed_url: 'https://real.example/from-v1.xml' }],
    });
    // A tablet, which another app registered: mygpoclient refuses a list with a type it does not know.
    await call(server.origin, 'POST', '/api/2/devices/real/tab.json', basicAuth('real', 'real-password'), {
      caption: 'Tablet',
      type: 'tablet',
    });
    const run = spawnSync(
      '/usr/bin/python3',
      [path.join(__dirname, '..', 'clients', 'gpodder_clients.py'), server.origin, 'real', 'real-password', work],
      { encoding: 'utf8', timeout: 120_000 },
    );
    if (run.status !== 0) throw new Error(`the clients failed (${run.status}):\n${run.stderr}`);
    const seen = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(seen.devices).toEqual([
      { id: 'pyclient', caption: 'mygpoclient test', type: 'desktop', subscriptions: 1 },
      { id: 'tab', caption: 'Tablet', type: 'mobile', subscriptions: 1 },
    ]);
    expect(seen.first_pull).toEqual({
      add: ['https://real.example/from-v1.xml'],
      remove: [],
      since: expect.any(Number),
    });
    expect(seen.update).toEqual({
      update_urls: [['itpc://real.example/mygpo-2.xml', 'http://real.example/mygpo-2.xml']],
      since: expect.any(Number),
    });
    expect((seen.pull_since as { add: string[] }).add).toEqual(
      expect.arrayContaining(['https://real.example/mygpo-1.xml', 'http://real.example/mygpo-2.xml']),
    );
    expect(seen.put).toBe(true);
    expect(seen.opml_has_outlines).toBe(4);
    // Positions and times survive the round trip to the second.
    expect(seen.episodes).toEqual([
      {
        podcast: 'https://real.example/mygpo-1.xml',
        episode: 'https://real.example/mygpo-1/ep1.mp3',
        action: 'play',
        device: 'pyclient',
        timestamp: '2026-11-20T08:30:15',
        started: 0,
        position: 1234,
        total: 3000,
      },
      {
        podcast: 'https://real.example/mygpo-1.xml',
        episode: 'https://real.example/mygpo-1/ep2.mp3',
        action: 'download',
        device: 'pyclient',
        timestamp: '2026-11-20T08:31:00',
        started: null,
        position: null,
        total: null,
      },
    ]);
    // gPodder uploaded its play (nothing left queued) and received mygpoclient's.
    expect(seen.gpodder_pending_episode_actions).toBe(0);
    expect(seen.gpodder_received_episodes).toEqual(
      expect.arrayContaining([['https://real.example/mygpo-1/ep1.mp3', 'play', 1234]]),
    );
    expect(seen.simple_get).toEqual([
      'https://real.example/from-v1.xml',
      'https://real.example/mygpo-1.xml',
      'http://real.example/mygpo-2.xml',
      'https://real.example/simple-put.xml',
    ]);
    // gPodder received everything the others added, and uploaded its own.
    expect(seen.gpodder_received_adds).toEqual(
      expect.arrayContaining(['https://real.example/from-v1.xml', 'https://real.example/simple-put.xml']),
    );
    expect(seen.gpodder_enabled_after).toBe(true);
    const gp = await call(
      server.origin,
      'GET',
      '/api/2/episodes/real.json?device=gpodder-desktop',
      basicAuth('real', 'real-password'),
    );
    expect(gp.body.actions).toEqual([
      expect.objectContaining({
        episode: 'https://real.example/gpodder-1/ep.mp3',
        action: 'play',
        position: 600,
        started: 10,
        total: 1800,
      }),
    ]);
    const v1 = await call(server.origin, 'GET', '/v1/subscriptions', basicAuth('real', 'real-password'));
    expect((v1.body.subscriptions as { feed_url: string }[]).map((s) => s.feed_url).sort()).toEqual(
      [
        'http://real.example/mygpo-2.xml',
        'https://real.example/from-v1.xml',
        'https://real.example/gpodder-1.xml',
        'https://real.example/mygpo-1.xml',
        'https://real.example/simple-put.xml',
      ].sort(),
    );
  } finally {
    await stopServer(server);
    fs.rmSync(work, { recursive: true, force: true });
  }
});
