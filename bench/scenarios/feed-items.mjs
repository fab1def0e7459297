// The fetcher's cost for a feed of 1,000 episodes (about 1 MB, with show notes): parsing it (CPU), and
// storing its items the first time (all new), again unchanged (nothing written), and with one item new
// (one added, the oldest gone), in this process, against the benchmark's database.
import { log, median, require, URL_HASH } from '../lib.mjs';

const { parseFeed, MAX_ITEMS } = require('./dist/feeds/parse.js');
const repo = require('./dist/feeds/repo.js');

const item = (k) => `<item><title>Episode ${k}</title><guid isPermaLink="false">episode-${k}</guid>
<pubDate>${new Date(Date.UTC(2020, 0, 1) + k * 86_400_000).toUTCString()}</pubDate>
<description><![CDATA[<p>Show notes of episode ${k}: ${'what was said, who said it, and the links. '.repeat(8)}</p>]]></description>
<enclosure url="https://media.example/episode-${k}.mp3" length="48000000" type="audio/mpeg"/>
<itunes:duration>3600</itunes:duration><podcast:season>1</podcast:season><podcast:episode>${k}</podcast:episode></item>`;
const feed = (from) =>
  Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns:podcast="https://podcastindex.org/namespace/1.0">
<channel><title>A long-running show</title><link>https://show.example/</link>
${Array.from({ length: MAX_ITEMS }, (_, k) => item(from + MAX_ITEMS - 1 - k)).join('\n')}
</channel></rss>`);

/** Median wall and CPU milliseconds of `fn`, run `times` times. */
async function measure(times, fn) {
  const wall = [];
  const cpu = [];
  for (let i = 0; i < times; i++) {
    const [t0, c0] = [performance.now(), process.cpuUsage()];
    await fn(i);
    const c = process.cpuUsage(c0);
    wall.push(performance.now() - t0);
    cpu.push((c.user + c.system) / 1000);
  }
  return { wall_ms: median(wall), cpu_ms: median(cpu) };
}

export default async function feedItems(ctx, results) {
  const { pool } = ctx;
  log('measuring the fetcher on a feed of 1,000 episodes ...');
  const body = feed(0);
  const parse = await measure(10, () => parseFeed(body));
  const hashes = await pool.query(
    `INSERT INTO feeds (url_hash, feed_url, next_fetch_at)
     SELECT ${URL_HASH("'https://items.bench.example/' || n")}, 'https://items.bench.example/' || n, now() + interval '1 day'
       FROM generate_series(0, 9) n
     ON CONFLICT (url_hash) DO UPDATE SET feed_url = excluded.feed_url RETURNING url_hash::text AS h`,
  );
  const feeds = hashes.rows.map((r) => r.h);
  const items = parseFeed(body).items;
  const next = parseFeed(feed(1)).items;
  await pool.query('DELETE FROM feed_items WHERE feed_hash = ANY ($1::uuid[])', [feeds]);
  const first = await measure(feeds.length, (i) => repo.saveItems(pool, feeds[i], items));
  const unchanged = await measure(feeds.length, (i) => repo.saveItems(pool, feeds[i], items));
  const oneNew = await measure(feeds.length, (i) => repo.saveItems(pool, feeds[i], next));
  results['feed of 1,000 episodes'] = {
    bytes: body.length,
    parse_cpu_ms: parse.cpu_ms,
    store_first_ms: first.wall_ms,
    store_unchanged_ms: unchanged.wall_ms,
    store_one_new_ms: oneNew.wall_ms,
  };
}
