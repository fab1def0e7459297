import type { Match } from './repo';

/** A valid item of a POST, after URL and guid checks. */
export type Item = { feedUrl: string; key: string; hash: string; guid: string; explicitGuid: boolean };

/** The record an item ends up in: an existing one (id) or a new one. */
export type Slot = {
  id: number | undefined;
  /** The record's current guid, once this request is done. */
  guid: string;
  /** The URL as last sent. */
  feedUrl: string;
  /** A new record's first URL key. */
  urlHash: string;
  guidChanged: boolean;
  /** guids that stop being current in this request, in order. */
  earlierGuids: string[];
  /** URLs the record gains (not yet any record's), each key once. */
  otherUrls: { hash: string; feedUrl: string }[];
};

/**
 * Decides, without touching the database, what a POST does: for each item in request order the record
 * it lands in. Matching is by guid first (any guid of a chain), then by normalised URL (any URL the
 * record had), against the user's records and the records this request creates before it. A guid the
 * client sends is authoritative: a record found by URL with another guid takes the client's guid.
 */
export type Plan = { slots: Slot[]; itemSlots: Slot[] };

export function planUpsert(items: Item[], matches: Match[]): Plan {
  const byGuid = new Map<string, Slot>();
  const byKey = new Map<string, Slot>();
  const byId = new Map<number, Slot>();
  const slots: Slot[] = [];
  const newSlot = (id: number | undefined, guid: string, item: Item): Slot => {
    const slot: Slot = {
      id,
      guid,
      feedUrl: item.feedUrl,
      urlHash: item.hash,
      guidChanged: false,
      earlierGuids: [],
      otherUrls: [],
    };
    byGuid.set(guid, slot);
    slots.push(slot);
    if (id !== undefined) byId.set(id, slot);
    return slot;
  };
  const existing = (id: number, guid: string, item: Item) => byId.get(id) ?? newSlot(id, guid, item);

  const itemSlots = items.map((item, i) => {
    const m = matches[i]!;
    let slot = byGuid.get(item.guid) ?? (m.guidSid !== null ? existing(m.guidSid, m.guidSidGuid!, item) : undefined);
    if (slot) {
      // Found by a guid of its chain: an earlier guid resolves to the record and changes nothing.
      byGuid.set(item.guid, slot);
    } else {
      slot = byKey.get(item.key) ?? (m.urlSid !== null ? existing(m.urlSid, m.urlSidGuid!, item) : undefined);
      if (!slot) {
        slot = newSlot(undefined, item.guid, item);
        byKey.set(item.key, slot);
      } else if (item.explicitGuid) {
        slot.earlierGuids.push(slot.guid);
        slot.guid = item.guid;
        slot.guidChanged = true;
        byGuid.set(item.guid, slot);
      }
    }
    slot.feedUrl = item.feedUrl;
    if (!byKey.has(item.key)) {
      byKey.set(item.key, slot);
      // A URL another record already has stays that record's: this one only shows it.
      if (m.urlSid === null) slot.otherUrls.push({ hash: item.hash, feedUrl: item.feedUrl });
    }
    return slot;
  });
  return { slots, itemSlots };
}
