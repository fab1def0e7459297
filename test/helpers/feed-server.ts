import http from 'node:http';
import type net from 'node:net';
import zlib from 'node:zlib';

/** An RSS 2.0 feed with the channel elements castsync keeps. */
export function rss(o: { title: string; guid?: string; newFeedUrl?: string; link?: string } = { title: 'A feed' }) {
  return `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns:podcast="https://podcastindex.org/namespace/1.0">
<channel>
  <title>${o.title}</title>
  <link>${o.link ?? 'https://example.org/show'}</link>
  <description>About the show</description>
  <language>en</language>
  <itunes:author>The Host</itunes:author>
  <itunes:image href="https://example.org/art.jpg"/>
  ${o.guid ? `<podcast:guid>${o.guid}</podcast:guid>` : ''}
  ${o.newFeedUrl ? `<itunes:new-feed-url>${o.newFeedUrl}</itunes:new-feed-url>` : ''}
  <item><title>Episode 1</title><enclosure url="https://example.org/1.mp3" type="audio/mpeg" length="1"/></item>
</channel>
</rss>`;
}

export const atom = `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xml:lang="de">
  <title>Atom &amp; Co</title>
  <subtitle>An Atom podcast</subtitle>
  <link rel="self" href="https://atom.example.org/feed"/>
  <link rel="alternate" href="https://atom.example.org/"/>
  <author><name>Atom Author</name></author>
  <logo>https://atom.example.org/logo.png</logo>
  <entry><title>One</title></entry>
</feed>`;

export const bomb = `<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<rss version="2.0"><channel><title>&lol4;</title></channel></rss>`;

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/**
 * A feed server on loopback for the fetcher's tests: routes by path, counts connections and requests,
 * and records the most requests it had open at once (per path prefix).
 */
export async function feedServer(routes: Record<string, Handler>, { delayMs = 0 } = {}) {
  let connections = 0;
  const requests: { path: string; headers: http.IncomingHttpHeaders }[] = [];
  let open = 0;
  let mostOpen = 0;
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    requests.push({ path, headers: req.headers });
    open++;
    mostOpen = Math.max(mostOpen, open);
    res.on('close', () => open--);
    const prefix = Object.keys(routes).find((p) => path === p || (p.endsWith('*') && path.startsWith(p.slice(0, -1))));
    const handle = prefix
      ? routes[prefix]!
      : (_req: http.IncomingMessage, r: http.ServerResponse) => r.writeHead(404).end();
    if (delayMs > 0) setTimeout(() => handle(req, res), delayMs);
    else handle(req, res);
  });
  server.on('connection', (s: net.Socket) => {
    connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    connections: () => connections,
    requests,
    mostOpen: () => mostOpen,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export const xml =
  (body: string, headers: http.OutgoingHttpHeaders = {}): Handler =>
  (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/rss+xml; charset=utf-8', ...headers }).end(body);
  };
export const redirect =
  (status: number, to: string): Handler =>
  (_req, res) => {
    res.writeHead(status, { location: to }).end();
  };
export const gzipped =
  (body: string): Handler =>
  (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/rss+xml', 'content-encoding': 'gzip' }).end(zlib.gzipSync(body));
  };
