import type { Queryable } from '../db/pool';
import { InvalidInput } from '../errors';
import { checkTarget, FetchFailed, type AddressPolicy } from '../feeds/service';
import * as subscriptions from '../subscriptions/service';
import { ntfyTarget } from './channels';
import * as repo from './repo';

// Each person's notification settings: all on or off, the URL that receives them (an ntfy topic or a
// webhook), and the feeds they turned off. docs/notifications.md.

export const HOOK_KINDS = ['webhook', 'ntfy'] as const;
export type HookKind = (typeof HOOK_KINDS)[number];

export type NotificationSettings = { enabled: boolean; url: string | null; kind: HookKind };

export const MAX_HOOK_URL_LENGTH = 2000;

export async function notificationSettings(db: Queryable, userId: number): Promise<NotificationSettings> {
  const row = await repo.settings(db, userId);
  return { enabled: row.enabled, url: row.hook_url, kind: row.hook_kind };
}

/**
 * Checks a URL to send notifications to: http or https, no longer than MAX_HOOK_URL_LENGTH, and an
 * address literal only where the fetcher's address policy allows it (a name is checked when it is
 * resolved, at each request). Throws InvalidInput with the reason.
 */
export function checkHookUrl(url: string, policy: AddressPolicy): string {
  if (url.length > MAX_HOOK_URL_LENGTH) throw new InvalidInput(`the URL is longer than ${MAX_HOOK_URL_LENGTH}`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidInput('not a URL');
  }
  try {
    checkTarget(parsed, policy);
  } catch (err) {
    if (err instanceof FetchFailed) throw new InvalidInput(err.message);
    throw err;
  }
  return parsed.href;
}

/** Changes what is given of the settings; returns them all. */
export async function setNotificationSettings(
  db: Queryable,
  userId: number,
  change: Partial<NotificationSettings>,
  policy: AddressPolicy,
): Promise<NotificationSettings> {
  const now = await notificationSettings(db, userId);
  if (change.kind !== undefined && !HOOK_KINDS.includes(change.kind)) throw new InvalidInput('unknown kind');
  const url = change.url === undefined ? now.url : change.url === null ? null : checkHookUrl(change.url, policy);
  const next = { enabled: change.enabled ?? now.enabled, url, kind: change.kind ?? now.kind };
  // The pair is checked, not the URL alone: a webhook's URL may end in what no ntfy topic could be.
  if (next.kind === 'ntfy' && next.url !== null) ntfyTarget(next.url);
  await repo.saveSettings(db, userId, { enabled: next.enabled, hook_url: next.url, hook_kind: next.kind });
  return next;
}

/** The feed key of the person's record with this guid (NotFound when there is none). */
async function feedOf(db: Queryable, userId: number, guid: string): Promise<string> {
  const record = await subscriptions.getRecord(db, userId, guid);
  const hash = subscriptions.urlHashOf(record.feedUrl);
  if (hash === undefined) throw new InvalidInput('the record has no feed URL the fetcher can fetch');
  return hash;
}

/** Turns notifications for the feed of the person's record with this guid on or off. */
export async function setFeedNotifications(db: Queryable, userId: number, guid: string, on: boolean): Promise<void> {
  const hash = await feedOf(db, userId, guid);
  if (on) await repo.unmute(db, userId, hash);
  else await repo.mute(db, userId, hash);
}

/** Of these feed URLs, the ones the person turned notifications off for. */
export async function feedsOff(db: Queryable, userId: number, feedUrls: string[]): Promise<Set<string>> {
  const muted = new Set(await repo.mutedFeeds(db, userId));
  return new Set(feedUrls.filter((u) => muted.has(subscriptions.urlHashOf(u) ?? '')));
}
