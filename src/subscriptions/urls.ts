import { hash } from 'node:crypto';
import { storable } from '../text';
import { uuidV5 } from '../uuid';

export const MAX_URL_LENGTH = 2048;

/** Schemes that podcast apps use for "subscribe" links; they name an http feed. */
const PODCAST_SCHEMES = new Set(['itpc', 'pcast', 'feed', 'podcast']);
const DEFAULT_PORTS: Record<string, string> = { http: '80', https: '443' };
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;
/** Whitespace, control characters and the characters a URL must escape: refused, not escaped for the client. */
const NOT_IN_URLS = /[\s<>"{}|\\^`\u0000-\u001f\u007f]/;

/** Why a feed URL is refused, in the words clients are shown. */
export type FeedUrlProblem = 'No protocol present' | 'Unsupported protocol' | 'Invalid URL' | 'URL too long';

export type FeedUrlResult = { ok: true; feedUrl: string; key: string } | { ok: false; problem: FeedUrlProblem };

/**
 * Validates a feed URL as a client sent it. feedUrl is what is stored (podcast schemes rewritten to http,
 * everything else as sent); key is the form compared when matching: scheme and host lower case, no
 * default port, no fragment, path and query unchanged.
 */
export function checkFeedUrl(raw: string): FeedUrlResult {
  if (raw.length > MAX_URL_LENGTH) return { ok: false, problem: 'URL too long' };
  const m = SCHEME.exec(raw);
  if (!m) return { ok: false, problem: 'No protocol present' };
  let scheme = m[1]!.toLowerCase();
  if (PODCAST_SCHEMES.has(scheme)) scheme = 'http';
  if (scheme !== 'http' && scheme !== 'https') return { ok: false, problem: 'Unsupported protocol' };
  if (NOT_IN_URLS.test(raw) || !storable(raw)) return { ok: false, problem: 'Invalid URL' };
  const rest = raw.slice(m[0].length);
  const feedUrl = scheme === m[1] ? raw : `${scheme}://${rest}`;
  let parsed: URL;
  try {
    parsed = new URL(feedUrl);
  } catch {
    return { ok: false, problem: 'Invalid URL' };
  }
  if (!parsed.hostname) return { ok: false, problem: 'Invalid URL' };
  // The path and query as sent: everything after the authority, without the fragment.
  const authorityEnd = rest.search(/[/?#]/);
  const fragment = authorityEnd < 0 ? -1 : rest.indexOf('#', authorityEnd);
  const tail = authorityEnd < 0 ? '' : rest.slice(authorityEnd, fragment < 0 ? undefined : fragment);
  const userinfo = parsed.username ? `${parsed.username}${parsed.password ? `:${parsed.password}` : ''}@` : '';
  const port = parsed.port && parsed.port !== DEFAULT_PORTS[scheme] ? `:${parsed.port}` : '';
  const path = tail === '' || tail.startsWith('?') ? `/${tail}` : tail;
  return { ok: true, feedUrl, key: `${scheme}://${userinfo}${parsed.hostname}${port}${path}` };
}

/**
 * What the database indexes for a URL (a btree entry must stay small): the first 128 bits of the SHA-256
 * of the matching key, as 32 hex digits, which PostgreSQL reads as a uuid (hyphens are optional in its
 * input) and stores in 16 bytes.
 */
export function urlHash(key: string): string {
  return hash('sha256', key, 'hex').slice(0, 32);
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A UUID in any case, returned lower case; undefined when the value is not one. */
export function parseGuid(value: string): string | undefined {
  return UUID_RE.test(value) ? value.toLowerCase() : undefined;
}

const PODCAST_NAMESPACE = Buffer.from('ead4c236bf5858c6a2c6a6b28d128cb6', 'hex');

/** The length of "scheme://" at the start of a URL (the two schemes feed URLs have, without a match). */
const schemeLength = (url: string): number =>
  url.startsWith('https://') ? 8 : url.startsWith('http://') ? 7 : (SCHEME.exec(url)?.[0].length ?? 0);

/**
 * The Podcasting 2.0 guid of a feed: UUIDv5 in the podcast namespace of the URL with its scheme and
 * trailing slashes removed.
 */
export function podcastGuid(feedUrl: string): string {
  let end = feedUrl.length;
  while (end > 0 && feedUrl.charCodeAt(end - 1) === 0x2f) end--;
  return uuidV5(PODCAST_NAMESPACE, feedUrl.slice(schemeLength(feedUrl), end));
}

/** The url_hash of a feed URL (the hash of its URL key), or undefined for a URL the rules refuse. */
export function urlHashOf(url: string): string | undefined {
  const checked = checkFeedUrl(url);
  return checked.ok ? urlHash(checked.key) : undefined;
}
