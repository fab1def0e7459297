import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeArchive } from '../helpers/gpodder-archive';
import { browser, cli, peakMib, startServer, stopServer, type ServerProcess } from '../helpers/process';

// An uploaded archive costs the running server a bounded amount of memory, whatever it holds: the request
// only stores the file, and the import's job reads it as it streams. Measured as the rise of the server
// process's peak resident memory (VmHWM), one server per upload, so that one upload's peak is not
// hidden under another's.

let dataDir: string;
beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'castsync-upload-memory-'));
  for (const name of ['ada', 'bea']) {
    expect(cli(['user', 'add', name, '--password-stdin'], { DATA_DIR: dataDir }, 'a-password\n').status).toBe(0);
  }
});
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

const MiB = 1024 * 1024;

/**
 * Uploads a file on the Import page of a new server, as a user with no other import; the page's text once
 * the import ended, and the rise of the peak.
 */
async function upload(user: string, form: string, file: Uint8Array, name: string) {
  let server: ServerProcess | undefined;
  try {
    server = await startServer({ DATA_DIR: dataDir, FEED_FETCH: 'false' });
    const b = browser(server.origin);
    const signIn = await b.send('/');
    const signedIn = await b.send('/web/sign-in', {
      _csrf: b.token(signIn.text),
      username: user,
      password: 'a-password',
    });
    expect(signedIn.status).toBe(303);
    const page = await b.send('/web/moving');
    const before = peakMib(server.child.pid!);
    const sent = await b.send(form, { _csrf: b.token(page.text), action: 'import' }, { archive: [file, name] });
    expect([sent.status, sent.location]).toEqual([303, expect.stringMatching(/^\/web\/moving\?started=\d+$/)]);
    let text = '';
    for (let i = 0; i < 600 && !/Done: imported|Failed:/.test(text); i++) {
      await new Promise((r) => setTimeout(r, 500));
      text = (await b.send('/web/moving')).text;
    }
    return { text, rise: peakMib(server.child.pid!) - before };
  } finally {
    if (server) await stopServer(server);
  }
}

test('a gpodder.net archive of 10 KB that expands to 300 MiB: the peak rises less than 150 MiB, and the page says why it stopped', async () => {
  // 300 MiB of white space in the list of podcasts: a "bomb" (zstd -19 makes it about 10 KB).
  const bomb = fs.readFileSync(writeArchive({ 'subscriptions.json': `[${' '.repeat(300 * MiB)}]` }));
  expect(bomb.length).toBeLessThan(16 * 1024);
  const { text, rise } = await upload('ada', '/web/import/gpodder-archive', bomb, 'alice.tar.zstd');
  expect(rise).toBeLessThan(150);
  expect(text).toContain(
    'Failed: Not a gpodder.net archive: it grows to more than 500 times its size once decompressed (a decompression bomb)',
  );
});

/** A castsync archive of about `size` bytes: one subscription, and plays with long episode URLs. */
function bigArchive(size: number): { bytes: Buffer; actions: number } {
  const action = (i: number) =>
    JSON.stringify({
      podcast: 'https://feeds.example.org/show.xml',
      episode: `https://media.example.org/show/${i}.mp3?token=${'t'.repeat(700)}`,
      guid: `episode-${i}`,
      action: 'play',
      timestamp: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
      device: 'phone',
      started: 0,
      position: 60,
      total: 3600,
    });
  const each = action(0).length + 1;
  const actions = Math.floor((size - 1000) / each);
  const text =
    `{"format":"castsync-archive","version":1,"exported_at":"2026-01-01T00:00:00.000Z","user":"ada",` +
    `"devices":[{"id":"phone","caption":"Phone","type":"mobile"}],` +
    `"subscriptions":[{"feed_url":"https://feeds.example.org/show.xml","guid":"0e4b1c2a-7d3f-4a8e-9b6c-5d2e1f0a9b8c",` +
    `"is_subscribed":true,"subscription_changed":"2026-01-01T00:00:00.000Z","guid_changed":null,"other_urls":[],"earlier_guids":[]}],` +
    `"episode_actions":[${Array.from({ length: actions }, (_, i) => action(i)).join(',')}],"favourites":[],"queue":[]}`;
  return { bytes: Buffer.from(text), actions };
}

test('a castsync archive of 63 MiB (the upload bound is 64): the peak rises less than 160 MiB, and it is imported', async () => {
  const { bytes, actions } = bigArchive(63 * MiB);
  expect(bytes.length).toBeGreaterThan(62 * MiB);
  const { text, rise } = await upload('bea', '/web/import/archive', bytes, 'ada.json');
  expect(rise).toBeLessThan(160);
  expect(text).toContain(`Done: imported`);
  expect(text).toContain(`${actions} new of ${actions} episode actions`);
});
