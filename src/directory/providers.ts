import { createHash } from 'node:crypto';
import { z } from 'zod';

// The podcast directories castsync can search: their request and the shape of their answer
// (docs/directory.md). Each answer is checked against the fields castsync reads; anything else is ignored.

/** A podcast a directory found. */
export type Found = {
  title: string;
  author: string | null;
  artworkUrl: string | null;
  feedUrl: string;
  description: string | null;
  website: string | null;
};

export type Credentials = { key: string; secret: string };

export type Provider = {
  name: 'itunes' | 'podcastindex';
  defaultUrl: string;
  /** The search request: URL and headers. */
  request: (
    base: string,
    query: string,
    limit: number,
    credentials?: Credentials,
  ) => { url: URL; headers: Record<string, string> };
  /** The podcasts of a parsed JSON answer; undefined when it is not the directory's shape. */
  found: (body: unknown) => Found[] | undefined;
};

const text = z.string().nullish().catch(null);
const web = (value: string | null | undefined) => (value && /^https?:\/\//i.test(value) ? value : null);
/** A base URL with its path kept, and `path` below it. */
const below = (base: string, path: string) => new URL(path, base.endsWith('/') ? base : `${base}/`);

export const USER_AGENT = 'castsync (podcast sync server; directory search)';

// The iTunes Search API: no key. https://performance-partners.apple.com/search-api
const itunesAnswer = z.object({
  results: z.array(
    z.object({
      collectionName: text,
      artistName: text,
      artworkUrl600: text,
      artworkUrl100: text,
      feedUrl: text,
      collectionViewUrl: text,
    }),
  ),
});

export const itunes: Provider = {
  name: 'itunes',
  defaultUrl: 'https://itunes.apple.com',
  request: (base, query, limit) => {
    const url = below(base, 'search');
    url.search = new URLSearchParams({
      media: 'podcast',
      entity: 'podcast',
      term: query,
      limit: String(limit),
    }).toString();
    return { url, headers: { 'user-agent': USER_AGENT, accept: 'application/json' } };
  },
  found: (body) => {
    const r = itunesAnswer.safeParse(body);
    if (!r.success) return undefined;
    return r.data.results.flatMap((p) =>
      web(p.feedUrl)
        ? [
            {
              title: p.collectionName ?? p.feedUrl!,
              author: p.artistName ?? null,
              artworkUrl: web(p.artworkUrl600) ?? web(p.artworkUrl100),
              feedUrl: p.feedUrl!,
              description: null,
              website: web(p.collectionViewUrl),
            },
          ]
        : [],
    );
  },
};

// Podcast Index: a key and a secret, and each request signed with them and the time.
// https://podcastindex-org.github.io/docs-api/
const podcastIndexAnswer = z.object({
  feeds: z.array(
    z.object({ title: text, author: text, image: text, artwork: text, url: text, description: text, link: text }),
  ),
});

/** Podcast Index's headers: the key, the time in Unix seconds, and sha1(key + secret + time) in hex. */
export function podcastIndexHeaders(credentials: Credentials, now: Date): Record<string, string> {
  const date = String(Math.floor(now.getTime() / 1000));
  return {
    'user-agent': USER_AGENT,
    accept: 'application/json',
    'x-auth-key': credentials.key,
    'x-auth-date': date,
    authorization: createHash('sha1')
      .update(credentials.key + credentials.secret + date)
      .digest('hex'),
  };
}

export const podcastIndex: Provider = {
  name: 'podcastindex',
  defaultUrl: 'https://api.podcastindex.org/api/1.0',
  request: (base, query, limit, credentials) => {
    const url = below(base, 'search/byterm');
    url.search = new URLSearchParams({ q: query, max: String(limit) }).toString();
    return { url, headers: podcastIndexHeaders(credentials!, new Date()) };
  },
  found: (body) => {
    const r = podcastIndexAnswer.safeParse(body);
    if (!r.success) return undefined;
    return r.data.feeds.flatMap((p) =>
      web(p.url)
        ? [
            {
              title: p.title || p.url!,
              author: p.author || null,
              artworkUrl: web(p.artwork) ?? web(p.image),
              feedUrl: p.url!,
              description: p.description || null,
              website: web(p.link),
            },
          ]
        : [],
    );
  },
};
