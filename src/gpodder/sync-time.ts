import { isStorable } from '../timestamps';
import { BadRequest } from './errors';

/** The last second PostgreSQL and the timestamps out hold (isStorable): nothing changes after it. */
const LAST_STORABLE = new Date(Date.UTC(9999, 11, 31, 23, 59, 59));

/**
 * `since` as gpodder and Nextcloud clients send it: whole Unix seconds. Missing or 0 is everything
 * (undefined); anything else that is not a whole number is a 400. A time past the year 9999 is read as that
 * year's last second, at or after which nothing is stamped: PostgreSQL refuses the time itself.
 */
export function parseSince(raw: unknown): Date | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string' || !/^\d{1,12}$/.test(raw)) {
    throw new BadRequest('Invalid since: a whole number of seconds since 1970');
  }
  const seconds = Number(raw);
  if (seconds === 0) return undefined;
  const since = new Date(seconds * 1000);
  return isStorable(since) ? since : LAST_STORABLE;
}

/**
 * The `timestamp` a client is given, from the user's last change stamp L (read in the same snapshot as
 * the changes, or the stamp of its own write): floor(L in seconds) - 1. Clients send it back as `since`
 * (AntennaPod, gPodder) or send it + 1 (Kasts), and the server returns changes at or after that second.
 * Either way that second starts at or before L, and every change the client has not seen was committed
 * after the read and so stamped after L (docs/decisions/sync-stamps.md): nothing is missed; changes of
 * the last second or two may come again.
 */
export const clientTimestamp = (lastChange: Date): number => Math.floor(lastChange.getTime() / 1000) - 1;
