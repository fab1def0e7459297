import { BadRequest } from '../http/errors';
import { parseTimestamp } from '../http/timestamps';
import { DEFAULT_PER_PAGE, MAX_PER_PAGE } from './schemas';

export type ListQuery = { since: Date | undefined; page: number; perPage: number };

const MAX_PAGE = 1_000_000_000;

function single(query: Record<string, unknown>, name: string): string | undefined {
  const v = query[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new BadRequest(`Invalid ${name}: give it once, as a plain value`);
  return v;
}

function integer(query: Record<string, unknown>, name: string, fallback: number, max: number, clamp: boolean): number {
  const raw = single(query, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) {
    throw new BadRequest(`Invalid ${name}: must be a whole number of at least 1`);
  }
  const n = Number(raw);
  if (n > max) {
    if (clamp) return max;
    throw new BadRequest(`Invalid ${name}: must be at most ${max}`);
  }
  return n;
}

/** since, page and per_page of GET /subscriptions; anything else in the query is ignored. */
export function parseListQuery(query: Record<string, unknown>): ListQuery {
  const rawSince = single(query, 'since');
  let since: Date | undefined;
  if (rawSince !== undefined) {
    since = parseTimestamp(rawSince);
    if (!since) throw new BadRequest('Invalid since: expected an ISO 8601 date-time such as 2026-11-22T10:15:30.123Z');
  }
  return {
    since,
    page: integer(query, 'page', 1, MAX_PAGE, false),
    perPage: integer(query, 'per_page', DEFAULT_PER_PAGE, MAX_PER_PAGE, true),
  };
}
