import type { RequestHandler } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
import { HttpError } from '../http/errors';

// /search needs no credentials, as on gpodder.net, but each search costs a request to the directory under
// this server's name (and its Podcast Index key): a client address gets a few a minute, then 429.

/** Searches per client address per minute. */
export const SEARCHES_PER_MINUTE = 30;
const WINDOW_MS = 60_000;

export function searchLimit(perMinute = SEARCHES_PER_MINUTE): RequestHandler {
  let windowStart = Date.now();
  let counts = new Map<string, number>();
  return (req, _res, next) => {
    const now = Date.now();
    // One window for every address: forgetting them all at once keeps the map small.
    if (now - windowStart >= WINDOW_MS) [windowStart, counts] = [now, new Map()];
    const key = ipKeyGenerator(req.ip ?? 'unknown');
    const n = (counts.get(key) ?? 0) + 1;
    counts.set(key, n);
    if (n > perMinute) {
      const retryAfter = Math.ceil((windowStart + WINDOW_MS - now) / 1000);
      throw new HttpError(429, 'Too many searches: try again in a minute', { 'Retry-After': String(retryAfter) });
    }
    next();
  };
}
