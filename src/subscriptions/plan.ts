/** A valid feed of a POST, after the URL and guid checks. */
export type Item = { feedUrl: string; key: string; hash: string; guid: string; explicitGuid: boolean };

/** A record of the user that an item's guid or URL names: its id, current guid and URL, and whether it is live. */
export type Hit = { id: number; guid: string; feedUrl: string; live: boolean };

/** What the database knows of an item: the record with its guid (any of a chain), the one with its URL. */
export type Match = { byGuid: Hit | null; byUrl: Hit | null };

/** The record an item lands in, as it will be once the request is written: an existing one (id) or a new one. */
export type Target = {
  id: number | undefined;
  /** The record's current guid, once this request is done. */
  guid: string;
  /** The URL as last sent (a live record's current URL, when the plan keeps those). */
  feedUrl: string;
  /** A live record whose current URL stays whatever URL of it is sent. */
  keepsUrl: boolean;
  /** A new record's first URL key. */
  urlHash: string;
  guidChanged: boolean;
  /** guids that stop being current in this request, in order. */
  earlierGuids: string[];
  /** URLs the record gains (not yet any record's), each key once. */
  otherUrls: { hash: string; feedUrl: string }[];
};

export type Plan = {
  /** Each record the request writes, once. */
  targets: Target[];
  /** The record of each item, in item order. */
  targetOf: Target[];
};

/**
 * Decides, without touching the database, what a POST does: for each item in request order the record
 * it lands in. Matching is by guid first (any guid of a chain), then by normalised URL (any URL the
 * record had), against the user's records and the records this request creates before it. A guid the
 * client sends is authoritative: a record found by URL with another guid takes the client's guid.
 * With `keepLiveUrls` (apps that sync by state), a subscribed record found under another of its URLs keeps
 * its current URL: announcing the sent one would be a new URL to every other app, a duplicate there.
 */
export function planUpsert(items: Item[], matches: Match[], { keepLiveUrls = false } = {}): Plan {
  const byGuid = new Map<string, Target>();
  const byKey = new Map<string, Target>();
  const byId = new Map<number, Target>();
  const targets: Target[] = [];
  const newTarget = (id: number | undefined, guid: string, item: Item, hit?: Hit): Target => {
    const keepsUrl = keepLiveUrls && hit !== undefined && hit.live;
    const target: Target = {
      id,
      guid,
      feedUrl: keepsUrl ? hit.feedUrl : item.feedUrl,
      keepsUrl,
      urlHash: item.hash,
      guidChanged: false,
      earlierGuids: [],
      otherUrls: [],
    };
    byGuid.set(guid, target);
    targets.push(target);
    if (id !== undefined) byId.set(id, target);
    return target;
  };
  const existing = (hit: Hit, item: Item) => byId.get(hit.id) ?? newTarget(hit.id, hit.guid, item, hit);

  const targetOf = items.map((item, i) => {
    const m = matches[i]!;
    let target = byGuid.get(item.guid) ?? (m.byGuid ? existing(m.byGuid, item) : undefined);
    if (target) {
      // Found by a guid of its chain: an earlier guid resolves to the record and changes nothing.
      byGuid.set(item.guid, target);
    } else {
      target = byKey.get(item.key) ?? (m.byUrl ? existing(m.byUrl, item) : undefined);
      if (!target) {
        target = newTarget(undefined, item.guid, item);
        byKey.set(item.key, target);
      } else if (item.explicitGuid) {
        target.earlierGuids.push(target.guid);
        target.guid = item.guid;
        target.guidChanged = true;
        byGuid.set(item.guid, target);
      }
    }
    if (!target.keepsUrl) target.feedUrl = item.feedUrl;
    if (!byKey.has(item.key)) {
      byKey.set(item.key, target);
      // A URL another record already has stays that record's: this one only shows it.
      if (!m.byUrl) target.otherUrls.push({ hash: item.hash, feedUrl: item.feedUrl });
    }
    return target;
  });
  return { targets, targetOf };
}

/** Whether the plan only creates records, each with one guid and one URL: the common POST of new feeds. */
export const onlyCreates = (plan: Plan): boolean =>
  plan.targets.every((t) => t.id === undefined && t.earlierGuids.length === 0 && t.otherUrls.length === 0);
