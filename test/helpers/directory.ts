import { createHash } from 'node:crypto';
import type http from 'node:http';
import { feedServer } from './feed-server';

// A podcast directory on loopback, speaking as the iTunes Search API (under /itunes) and Podcast Index
// (under /pi, checking its signed headers), and able to fail in each way a real one does.

export type Mode = 'ok' | 'slow' | 'error' | 'not-json' | 'wrong-shape' | 'refuse-key';

export const KEY = 'TESTKEY123';
export const SECRET = 'test-secret-$$';

const itunesAnswer = (term: string) => ({
  resultCount: 2,
  results: [
    {
      collectionName: `${term} Weekly`,
      artistName: 'Weekly Host',
      artworkUrl600: 'https://art.example/weekly.jpg',
      feedUrl: 'https://feeds.example/weekly.xml',
    },
    // No feed URL: not a podcast castsync can subscribe to.
    { collectionName: 'Apple only', artistName: 'Nobody' },
  ],
});
const piAnswer = (q: string) => ({
  status: 'true',
  feeds: [
    {
      id: 1,
      title: `${q} Daily`,
      author: 'Daily Host',
      artwork: 'https://art.example/daily.jpg',
      url: 'https://feeds.example/daily.xml',
      description: 'Every day',
    },
  ],
  count: 1,
});

/** Whether the request carries Podcast Index's headers, signed with the test key and secret, made now. */
export function signedByTestKey(headers: http.IncomingHttpHeaders): boolean {
  const date = String(headers['x-auth-date'] ?? '');
  const expected = createHash('sha1')
    .update(KEY + SECRET + date)
    .digest('hex');
  return (
    headers['x-auth-key'] === KEY &&
    Math.abs(Number(date) - Date.now() / 1000) < 60 &&
    headers.authorization === expected &&
    /castsync/.test(String(headers['user-agent']))
  );
}

export async function fakeDirectory(feeds: Record<string, string> = {}) {
  const state = { mode: 'ok' as Mode };
  const answer =
    (body: (q: string) => unknown, checkKey: boolean) => (req: http.IncomingMessage, res: http.ServerResponse) => {
      const q = new URL(req.url!, 'http://x').searchParams;
      const term = q.get('term') ?? q.get('q') ?? '';
      const send = (status: number, text: string) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(text);
      if (checkKey && !signedByTestKey(req.headers)) return send(401, '{"status":"false","description":"bad auth"}');
      switch (state.mode) {
        case 'ok':
          return send(200, JSON.stringify(body(term)));
        case 'slow':
          return void setTimeout(() => send(200, JSON.stringify(body(term))), 3000).unref();
        case 'error':
          return send(503, 'upstream down');
        case 'not-json':
          return send(200, '<html>maintenance</html>');
        case 'wrong-shape':
          return send(200, '{"results": "none", "feeds": 3}');
        case 'refuse-key':
          return send(401, '{"status":"false","description":"Authorization failed"}');
      }
    };
  const routes: Record<string, (req: http.IncomingMessage, res: http.ServerResponse) => void> = {
    '/itunes/search': answer(itunesAnswer, false),
    '/pi/search/byterm': answer(piAnswer, true),
  };
  for (const [path, body] of Object.entries(feeds)) {
    routes[path] = (_req, res) => res.writeHead(200, { 'content-type': 'application/rss+xml' }).end(body);
  }
  const server = await feedServer(routes);
  return { ...server, state };
}
