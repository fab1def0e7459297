import { requestUrlForLog, urlForLog } from '../../src/logger';

// What the request log keeps of a URL: everything but what a log reader could use (a login flow's code, the
// OpenID provider's answer, secrets by name, the user and query parts of any URL sent inside the request).

test.each([
  // Nothing secret: the URL as it came.
  ['/v1/subscriptions?since=2024-01-01T00:00:00Z&page=1', '/v1/subscriptions?since=2024-01-01T00:00:00Z&page=1'],
  ['/web/subscriptions?state=subscribed&q=news', '/web/subscriptions?state=subscribed&q=news'],
  ['/api/2/episodes/me@example.com.json?since=0', '/api/2/episodes/me@example.com.json?since=0'],
  ['/search.json?q=3.5%20stars&flag', '/search.json?q=3.5%20stars&flag'],
  [
    '/web/search/preview?url=https%3A%2F%2Ffeeds.example.com%2Frss',
    '/web/search/preview?url=https%3A%2F%2Ffeeds.example.com%2Frss',
  ],
  // A login flow's code, in the path or in a `next` leading to it.
  ['/login/flow/AbC123', '/login/flow/[redacted]'],
  ['/LOGIN/FLOW/AbC123/', '/LOGIN/FLOW/[redacted]/'],
  ['/?next=%2Flogin%2Fflow%2FAbC123', '/?next=/login/flow/[redacted]'],
  // The OpenID provider's answer, all of it; `code` and token names anywhere.
  [
    '/web/sign-in/oidc/callback?code=c&state=s&iss=i',
    '/web/sign-in/oidc/callback?code=[redacted]&state=[redacted]&iss=[redacted]',
  ],
  ['/web/sign-in/oidc/callback/?error=access_denied', '/web/sign-in/oidc/callback/?error=[redacted]'],
  [
    '/x?Code=c&access_token=a&TOKEN=t&password=p',
    '/x?Code=[redacted]&access_token=[redacted]&TOKEN=[redacted]&password=[redacted]',
  ],
  // A feed URL inside the request: its user part and query go, encoded or not, in a query or a path segment.
  [
    '/web/search/preview?url=https%3A%2F%2Fu%3Ap%40feeds.example.com%2Frss%3Ftoken%3Dabc&q=x',
    '/web/search/preview?url=https://[redacted]@feeds.example.com/rss?[redacted]&q=x',
  ],
  [
    '/api/2/data/podcast.json?url=https://u:p@feeds.example.com/rss?a=1&auth=abc',
    '/api/2/data/podcast.json?url=https://[redacted]@feeds.example.com/rss?[redacted]&auth=[redacted]',
  ],
  [
    '/api/2/data/podcast.json?url=feed://feeds.example.com/rss%3Fkey%3Dz',
    '/api/2/data/podcast.json?url=feed://feeds.example.com/rss?[redacted]',
  ],
  ['/search.json?q=u:p@feeds.example.com/rss', '/search.json?q=[redacted]@feeds.example.com/rss'],
  ['/search.json?q=feeds.example.com/rss?token=abc', '/search.json?q=feeds.example.com/rss?[redacted]'],
  ['/v1/x/https%3A%2F%2Fu%3Ap%40h.example%2Ff%3Ft%3D1', '/v1/x/https://[redacted]@h.example/f?[redacted]'],
  ['/x?https://u:p@h.example/f?token=x', '/x?https://[redacted]@h.example/f?[redacted]=[redacted]'],
  // What cannot be read is not kept.
  ['/x?q=%E0%A4%A', '/x?q=[redacted]'],
])('%s is logged as %s', (url, logged) => {
  expect(requestUrlForLog(url)).toBe(logged);
});

test('a URL a log line names keeps its host and path only', () => {
  expect(urlForLog('https://listener:secret@feeds.example.com:8443/private/rss.xml?auth=t#x')).toBe(
    'https://[redacted]@feeds.example.com:8443/private/rss.xml?[redacted]',
  );
  expect(urlForLog('https://feeds.example.com/rss.xml')).toBe('https://feeds.example.com/rss.xml');
});

test.each([
  // Supercast, Substack, a secret address: the token in the path goes, the rest stays.
  ['https://acme.supercast.com/feeds/Xk3p9QmZ7vT2wR8sLq4n', 'https://acme.supercast.com/feeds/[redacted]'],
  [
    'https://api.substack.com/feed/podcast/123456/private/0f8e4a2c-9b1d-4e6f-a3c5-7d2b8e1f0a94.rss',
    'https://api.substack.com/feed/podcast/123456/private/[redacted].rss',
  ],
  ['https://feeds.example.com/u/a1b2c3d4e5f6a7b8c9d0/rss?x=1', 'https://feeds.example.com/u/[redacted]/rss?[redacted]'],
  // Words, slugs, dates and short ids stay.
  [
    'https://feeds.example.com/the-daily-podcast-feed/rss.xml',
    'https://feeds.example.com/the-daily-podcast-feed/rss.xml',
  ],
  ['https://feeds.megaphone.fm/GLT1412515089', 'https://feeds.megaphone.fm/GLT1412515089'],
  ['https://example.com/2024/11/episode-42.mp3', 'https://example.com/2024/11/episode-42.mp3'],
])('a token in the path of %s is not logged', (url, logged) => {
  expect(urlForLog(url)).toBe(logged);
});
