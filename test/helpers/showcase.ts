import pino from 'pino';
import { loadConfig } from '../../src/config';
import { fetchDueFeeds, fetcherSettings } from '../../src/feeds/fetcher';
import { as, type TestApp, type TestUser } from './app';
import { audio, wav } from './audio';
import { feedServer, xml } from './feed-server';
import { png } from '../../scripts/png';

// A person with something to show, for the pages' measurements (test/browser/lighthouse.test.ts) and the
// screenshots in docs/screenshots (test/screenshots/shoot.ts): two podcasts on a loopback feed server,
// with artwork as large as the directories ask for (1400 px a side), new episodes, show notes.

/** The environment the app needs to fetch from the loopback feed server. */
export const LOOPBACK = { FEED_FETCH_ALLOW_CIDRS: '127.0.0.1/32' };

/**
 * Podcast artwork as the directories ask for it, 1400 px a side, of about the weight such a JPEG has
 * (300 kB): a diagonal blend from one colour to another, with a sparse grain that does not compress.
 */
export function artwork(from: number[], to: number[]): Buffer {
  let seed = 7;
  return png(1400, (x, y) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    const grain = (seed >> 16) % 24 === 0 ? 1 : 0;
    return from.map((f, c) => Math.round(f + (to[c]! - f) * ((x + y) / 2)) + (c === 1 ? grain : 0));
  });
}

const NOTES = `<p>This week we talk to a guest about <a href="https://example.org/guest">their new book</a> on
  the history of radio, from crystal sets to podcasts.</p>
  <h3>In this episode</h3><ul><li>0:42 The interview</li><li>12:10 Listener questions</li><li>25:00 Goodbye</li></ul>
  <p>Send us your questions by mail; we read every one.</p>`;

const TITLES: Record<string, string[]> = {
  radio: ['The history of radio', 'Letters from listeners', 'Live from the studio', 'Crystal sets'],
  garden: ['Planting in autumn', 'A walk in the woods', 'Compost, explained', 'Questions from the allotment'],
};

const item = (feed: string, i: number, media: string) => `<item><guid>${feed}-${i}</guid>
  <title>${TITLES[feed]![i]}</title>
  <pubDate>${new Date(Date.now() - i * 86_400_000 - (feed === 'radio' ? 1 : 5) * 3_600_000).toUTCString()}</pubDate>
  <itunes:duration>${1500 + i * 300}</itunes:duration>
  <itunes:image href="${media}/${feed}.png"/>
  <enclosure url="${media}/talk.wav" type="audio/wav"/>
  <content:encoded><![CDATA[${NOTES}]]></content:encoded></item>`;

const rss = (feed: string, title: string, media: string) => `<?xml version="1.0"?>
  <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns:content="http://purl.org/rss/1.0/modules/content/">
  <channel><title>${title}</title><itunes:image href="${media}/${feed}.png"/>
  ${[0, 1, 2, 3].map((i) => item(feed, i, media)).join('')}</channel></rss>`;

const image = (body: Buffer) => (_req: unknown, res: import('node:http').ServerResponse) =>
  res.writeHead(200, { 'content-type': 'image/png', 'cache-control': 'max-age=86400' }).end(body);

export type Showcase = { user: TestUser; episodeId: string; close: () => Promise<void> };

/** The loopback feed server and a person subscribed to its two podcasts, fetched: `t` needs LOOPBACK. */
export async function showcase(t: TestApp): Promise<Showcase> {
  // The routes are filled in once the server's address (in the feeds) is known.
  const routes: Parameters<typeof feedServer>[0] = {};
  const server = await feedServer(routes);
  const media = server.url('');
  Object.assign(routes, {
    '/radio.png': image(artwork([29, 78, 216], [147, 51, 234])),
    '/garden.png': image(artwork([22, 101, 52], [234, 179, 8])),
    '/talk.wav': audio(wav(60)),
    '/radio': xml(rss('radio', 'Radio Stories', media)),
    '/garden': xml(rss('garden', 'The Garden Hour', media)),
  });
  const user = await t.user('showcase');
  await as(t, user).post('/v1/subscriptions', {
    subscriptions: [{ feed_url: server.url('/radio') }, { feed_url: server.url('/garden') }],
  });
  await fetchDueFeeds(
    { db: t.db, logger: pino({ level: 'silent' }) },
    fetcherSettings(loadConfig(LOOPBACK, { dotenvFile: false })),
  );
  const { rows } = await t.db.query<{ id: string }>(
    "SELECT id::text AS id FROM feed_items WHERE title = 'The history of radio'",
  );
  return { user, episodeId: rows[0]!.id, close: server.close };
}
