import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DOWNLOAD_PAGE, record, since, type EpisodeAction } from '../../src/episodes/service';
import { clientTimestamp } from '../../src/gpodder/sync-time';
import { as, sleep, testApp, type TestApp, type TestUser } from '../helpers/app';
import { readAll } from '../helpers/episodes';

// A download longer than a page (episodes.DOWNLOAD_PAGE actions) is read a page at a time and written to
// the client as the pages come (docs/decisions/streamed-downloads.md). These check that it is still the
// answer one read would give, and that the writes of the user during it are never lost.

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

const play = (n: number, position = n): EpisodeAction => ({
  podcastUrl: `https://stream-${n % 2 === 0 ? 'even' : 'odd'}.example/feed.xml`,
  episodeUrl: `https://stream.example/${n}.mp3`,
  action: 'play',
  at: new Date(Date.UTC(2026, 0, 1) + n * 1000),
  position,
});
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, k) => from + k);
const episodesOf = (actions: { episode: string }[]) => actions.map((a) => Number(/(\d+)\.mp3$/.exec(a.episode)![1]));

/** A user with `n` plays over two podcasts, stored in three writes (three change stamps). */
async function userWith(n: number): Promise<{ u: TestUser; lastStamp: Date }> {
  const u = await t.user('stream');
  const cut = [Math.floor(n * 0.6), n - 1];
  await record(
    t.db,
    u.id,
    range(1, cut[0]!).map((k) => play(k)),
  );
  await record(
    t.db,
    u.id,
    range(cut[0]! + 1, cut[1]!).map((k) => play(k)),
  );
  const last = await record(t.db, u.id, [play(n)]);
  return { u, lastStamp: last.changedAt };
}

const TOTAL = 2 * DOWNLOAD_PAGE + 151;

test('a download of more than a page is whole, in order, once each, with a timestamp to sync on from', async () => {
  const { u, lastStamp } = await userWith(TOTAL);
  const api = as(t, u);
  const before = Date.now();
  const r = await api.get(`/api/2/episodes/${u.name}.json?since=0`);
  const after = Date.now();
  expect(r.status).toBe(200);
  // Streamed: no length; the bytes are still those of the whole answer, compact.
  expect(r.headers['content-length']).toBeUndefined();
  expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(r.text).toBe(JSON.stringify(r.body));
  expect(Object.keys(r.body)).toEqual(['actions', 'timestamp']);
  expect(episodesOf(r.body.actions)).toEqual(range(1, TOTAL));
  expect(r.body.actions[TOTAL - 1]).toEqual({
    podcast: 'https://stream-odd.example/feed.xml',
    episode: `https://stream.example/${TOTAL}.mp3`,
    action: 'play',
    timestamp: play(TOTAL).at.toISOString().slice(0, 19),
    position: TOTAL,
  });
  // The clock of the read, less a second: after the last write, and no later than the answer.
  const timestamp = r.body.timestamp as number;
  expect(timestamp).toBeGreaterThanOrEqual(Math.max(clientTimestamp(lastStamp), clientTimestamp(new Date(before))));
  expect(timestamp).toBeLessThanOrEqual(clientTimestamp(new Date(after)));

  // The same for Nextcloud, for one podcast's actions, and for the aggregated view (one play an episode).
  const nextcloud = await api.get(`/index.php/apps/gpoddersync/episode_action?since=0`);
  expect(nextcloud.body.actions).toEqual(r.body.actions);
  const odd = await api.get(
    `/api/2/episodes/${u.name}.json?since=0&podcast=${encodeURIComponent('https://stream-odd.example/feed.xml')}`,
  );
  expect(episodesOf(odd.body.actions)).toEqual(range(1, TOTAL).filter((n) => n % 2 === 1));
  const aggregated = await api.get(`/api/2/episodes/${u.name}.json?since=0&aggregated=true`);
  expect(aggregated.text).toBe(JSON.stringify({ actions: r.body.actions, timestamp: aggregated.body.timestamp }));

  // A page's worth or less is one answer with its length, as before.
  const one = await api.get(
    `/api/2/episodes/${u.name}.json?since=0&podcast=${encodeURIComponent('https://none.example/feed.xml')}`,
  );
  expect(one.headers['content-length']).toBe(String(Buffer.byteLength(one.text)));
  expect(one.body.actions).toEqual([]);
});

test('a download of exactly two pages (the last one full) ends as well', async () => {
  const { u } = await userWith(2 * DOWNLOAD_PAGE);
  const r = await as(t, u).get(`/api/2/episodes/${u.name}.json?since=0`);
  expect(r.text).toBe(JSON.stringify(r.body));
  expect(episodesOf(r.body.actions)).toEqual(range(1, 2 * DOWNLOAD_PAGE));
  expect(typeof r.body.timestamp).toBe('number');
});

test('a write that commits between two pages is in the download, and never lost for the next since', async () => {
  const { u } = await userWith(TOTAL);
  const pages = since(t.db, u.id, {});
  const first = await pages.next();
  // Between the first page and the second: a new play, and a later play of an episode already sent.
  await record(t.db, u.id, [play(TOTAL + 1), play(1, 99)]);
  const rest = await readAll(pages);
  const sent = JSON.parse(`[${first.value as string},${rest.json}]`) as { episode: string; position: number }[];
  expect(episodesOf(sent)).toEqual([...range(1, TOTAL), TOTAL + 1, 1]);

  // What a client that syncs from this download's timestamp gets next: the new play again (a change may
  // come twice, never be missed), for the full and the aggregated view.
  const next = clientTimestamp(rest.readAt);
  for (const view of ['', '&aggregated=true']) {
    const again = await as(t, u).get(`/api/2/episodes/${u.name}.json?since=${next}${view}`);
    expect(episodesOf(again.body.actions)).toEqual(expect.arrayContaining([TOTAL + 1, 1]));
  }
});

test('aggregated: an episode whose latest play changes during the download comes again with it', async () => {
  const { u } = await userWith(TOTAL);
  const pages = since(t.db, u.id, { aggregated: true });
  const first = await pages.next();
  await record(t.db, u.id, [play(2, 1234)]);
  const rest = await readAll(pages);
  const sent = JSON.parse(`[${first.value as string},${rest.json}]`) as { episode: string; position: number }[];
  expect(episodesOf(sent)).toEqual([...range(1, TOTAL), 2]);
  expect(sent.at(-1)!.position).toBe(1234);
});

test('a write under way when the last page is read: the download waits for it and includes it', async () => {
  const { u } = await userWith(TOTAL);
  const pages = since(t.db, u.id, {});
  const first = await pages.next();
  const writer = await t.db.connect();
  try {
    await writer.query('BEGIN');
    await record(writer, u.id, [play(TOTAL + 1)]);
    let answered = false;
    const rest = readAll(pages).then((x) => {
      answered = true;
      return x;
    });
    await sleep(300);
    expect(answered).toBe(false);
    await writer.query('COMMIT');
    const sent = JSON.parse(`[${first.value as string},${(await rest).json}]`) as { episode: string }[];
    expect(episodesOf(sent)).toEqual(range(1, TOTAL + 1));
  } finally {
    writer.release();
  }
});

test('an error after the first page destroys the connection: never a short answer that looks whole', async () => {
  // 30,000 actions of about 1 KB: far more than the sockets hold while the client reads nothing, so the
  // download is still reading when its user goes (and the next page finds no user).
  const u = await t.user('stream');
  await t.db.query(
    `INSERT INTO episode_actions (user_id, podcast_url, podcast_hash, episode_url, episode_hash, action, at, changed, json)
     SELECT $1, 'https://big.example/feed.xml', gen_random_uuid(), 'https://big.example/' || n || '.mp3',
            gen_random_uuid(), 'download', now(), now(), '{"episode":"' || repeat('x', 1000) || '"}'
       FROM generate_series(1, 30000) n`,
    [u.id],
  );
  const server = t.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    const { port } = server.address() as AddressInfo;
    const answer = await new Promise<{ status: number; complete: boolean; body: string }>((resolve, reject) => {
      const req = http.get(
        {
          host: '127.0.0.1',
          port,
          path: `/api/2/episodes/${u.name}.json?since=0`,
          headers: { authorization: u.basic },
        },
        (res) => {
          res.pause();
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', () => undefined);
          res.on('close', () =>
            resolve({ status: res.statusCode!, complete: res.complete, body: Buffer.concat(chunks).toString() }),
          );
          void t.db.query('DELETE FROM users WHERE id = $1', [u.id]).then(() => res.resume(), reject);
        },
      );
      req.on('error', () => undefined);
    });
    expect(answer.status).toBe(200);
    expect(answer.body.startsWith('{"actions":[{"episode":"x')).toBe(true);
    expect(answer.complete).toBe(false);
    expect(() => JSON.parse(answer.body)).toThrow();
  } finally {
    await new Promise((r) => server.close(r));
  }
});
