import type { RequestHandler } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
import { HttpError } from '../http/errors';

// Routes that need no credentials but cost this server something at each call: a client address (an
// IPv6 address by its /56) gets a few per window, then 429. The counts are this process's own.

/**
 * At most `limit` requests per client address in each window of `windowMs`, then 429 with Retry-After
 * and `message`. One window for every address: forgetting them all at once keeps the map small.
 */
export function addressLimit(limit: number, windowMs: number, message: string): RequestHandler {
  let windowStart = Date.now();
  let counts = new Map<string, number>();
  return (req, _res, next) => {
    const now = Date.now();
    if (now - windowStart >= windowMs) [windowStart, counts] = [now, new Map()];
    const key = ipKeyGenerator(req.ip ?? 'unknown');
    const n = (counts.get(key) ?? 0) + 1;
    counts.set(key, n);
    if (n > limit) {
      const retryAfter = Math.ceil((windowStart + windowMs - now) / 1000);
      throw new HttpError(429, message, { 'Retry-After': String(retryAfter) });
    }
    next();
  };
}

/**
 * /search, as on gpodder.net, needs no credentials, but each search costs a request to the directory
 * under this server's name (and its Podcast Index key).
 */
export const SEARCHES_PER_MINUTE = 30;
export const searchLimit = (perMinute = SEARCHES_PER_MINUTE): RequestHandler =>
  addressLimit(perMinute, 60_000, 'Too many searches: try again in a minute');

/**
 * Starting a Nextcloud login flow needs no credentials and stores a flow (kept 20 minutes): an address may
 * start this many in 10 minutes, enough for every app of a household behind one address.
 */
export const LOGIN_FLOW_STARTS = 20;
export const loginFlowLimit = (): RequestHandler =>
  addressLimit(LOGIN_FLOW_STARTS, 10 * 60_000, 'Too many login flows started: try again in a few minutes');
