// Feed hosts for the benchmark's fetcher: the same port on 127.0.0.2 ... 127.0.0.(1 + HOSTS), each
// answering after DELAY ms (a podcast host's round trip). `show` (the fetch backlog): every path a 60 KB RSS
// feed of 100 episodes; `ranked` (the scale bench): /<rank>.xml that rank's feed (bench/scale/shape.mjs).
// Its own process, so that serving feeds does not take the load generator's CPU.
//   node bench/feeds.mjs <port> [hosts=20] [delayMs=200] [show|ranked]
import http from 'node:http';
import { feedXml } from './scale/shape.mjs';

const [port, hosts = 20, delayMs = 200] = process.argv.slice(2, 5).map(Number);
const kind = process.argv[5] ?? 'show';

const item = (k) => `<item><title>Episode ${k}</title><guid isPermaLink="false">episode-${k}</guid>
<pubDate>Mon, 02 Nov 2026 10:00:00 GMT</pubDate>
<description><![CDATA[<p>Show notes of episode ${k}: ${'what was said, who said it, and the links. '.repeat(8)}</p>]]></description>
<enclosure url="https://media.example/episode-${k}.mp3" length="48000000" type="audio/mpeg"/>
<itunes:duration>3600</itunes:duration></item>`;
const feed = (title) => `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns:podcast="https://podcastindex.org/namespace/1.0">
<channel><title>${title}</title><link>https://show.example/</link><language>en</language>
<description>A show served to the benchmark.</description><itunes:author>Bench</itunes:author>
<itunes:image href="https://show.example/cover.jpg"/>
${Array.from({ length: 100 }, (_, k) => item(k)).join('\n')}
</channel></rss>`;

/** The feed at this path, or undefined (404). */
const feedAt = (path) => {
  if (kind === 'show') return feed(`Show ${path}`);
  const rank = Number(/^\/(\d+)\.xml$/.exec(path)?.[1]);
  return rank ? feedXml(rank) : undefined;
};

let served = 0;
const server = (host) =>
  new Promise((resolve, reject) => {
    const s = http.createServer((req, res) => {
      setTimeout(() => {
        served++;
        const body = feedAt(req.url ?? '/');
        if (body === undefined) res.writeHead(404).end();
        else res.writeHead(200, { 'content-type': 'application/rss+xml; charset=utf-8' }).end(body);
      }, delayMs);
    });
    s.once('error', reject);
    s.listen(port, host, () => resolve(s));
  });
await Promise.all(Array.from({ length: hosts }, (_, k) => server(`127.0.0.${2 + k}`)));
console.log(`feeds ready on ${hosts} hosts`);
setInterval(() => console.log(`served ${served}`), 5000).unref();
process.on('SIGTERM', () => process.exit(0));
