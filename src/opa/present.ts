import { iso } from '../timestamps';
import type { ChangeReport, Outcome, SubscriptionRecord } from '../subscriptions/service';
import type { PatchResult, PostResult, RecordOut } from './schemas';

/** A record as OPA clients see it: timestamps as ISO strings, absent fields left out. */
export function presentRecord(r: SubscriptionRecord): RecordOut {
  const out: RecordOut = {
    feed_url: r.feedUrl,
    guid: r.guid,
    is_subscribed: r.isSubscribed,
    subscription_changed: iso(r.subscriptionChanged),
  };
  if (r.currentGuid !== r.guid) out.new_guid = r.currentGuid;
  if (r.guidChanged) out.guid_changed = iso(r.guidChanged);
  if (r.deleted) out.deleted = iso(r.deleted);
  return out;
}

/** POST's answer: the feeds that were subscribed, and the ones refused with their reason. */
export function presentOutcomes(changedAt: Date | undefined, outcomes: Outcome[]): PostResult {
  const result: PostResult = { success: [], failure: [] };
  const changed = changedAt && iso(changedAt);
  for (const o of outcomes) {
    if (o.ok) {
      result.success.push({ feed_url: o.url, guid: o.guid, is_subscribed: true, subscription_changed: changed! });
    } else {
      result.failure.push({ feed_url: o.url, message: o.reason });
    }
  }
  return result;
}

/** PATCH's answer: only what changed. */
export function presentChange(c: ChangeReport): PatchResult {
  const out: PatchResult = {};
  if (c.feedUrl !== undefined) out.new_feed_url = c.feedUrl;
  if (c.subscribed !== undefined) out.is_subscribed = c.subscribed;
  if (c.subscriptionChanged) out.subscription_changed = iso(c.subscriptionChanged);
  if (c.guid !== undefined) out.new_guid = c.guid;
  if (c.guidChanged) out.guid_changed = iso(c.guidChanged);
  return out;
}
