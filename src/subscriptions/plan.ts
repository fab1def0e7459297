import type { Match } from './repo';

/** A valid item of a POST, after URL and guid checks. */
export type Item = { feedUrl: string; key: string; hash: Buffer; guid: string; explicitGuid: boolean };

/** The record an item ends up in: an existing one (id) or a new one. */
export type Slot = {
  id: number | undefined;
  guid: string;
  feedUrl: string;
  guidChanged: boolean;
  newGuids: string[];
  newUrls: Map<string, { hash: Buffer; feedUrl: string }>;
};

/**
 * Decides, without touching the database, what a POST does: for each item in request order the record
 * it lands in. Matching is by guid first (any guid of a chain), then by normalised URL (any URL the
 * record had), against the user's records and the records this request creates before it. A guid the
 * client sends is authoritative: a record found by URL with another guid takes the client's guid.
 */
export function planUpsert(items: Item[], matches: Match[]): { slots: Slot[]; itemSlots: Slot[] } {
  const byGuid = new Map<string, Slot>();
  const byKey = new Map<string, Slot>();
  const byId = new Map<number, Slot>();
  const slots: Slot[] = [];

  const existing = (id: number, guid: string): Slot => {
    let slot = byId.get(id);
    if (!slot) {
      slot = { id, guid, feedUrl: '', guidChanged: false, newGuids: [], newUrls: new Map() };
      byId.set(id, slot);
      byGuid.set(guid, slot);
      slots.push(slot);
    }
    return slot;
  };

  const itemSlots = items.map((item, i) => {
    const m = matches[i]!;
    const keyHex = item.hash.toString('hex');
    let slot = byGuid.get(item.guid) ?? (m.guidSid !== null ? existing(m.guidSid, m.guidSidGuid!) : undefined);
    if (slot) {
      // Found by a guid of its chain: an earlier guid resolves to the record and changes nothing.
      byGuid.set(item.guid, slot);
    } else {
      slot = byKey.get(keyHex) ?? (m.urlSid !== null ? existing(m.urlSid, m.urlSidGuid!) : undefined);
      if (!slot) {
        slot = {
          id: undefined,
          guid: item.guid,
          feedUrl: '',
          guidChanged: false,
          newGuids: [item.guid],
          newUrls: new Map(),
        };
        slots.push(slot);
      } else if (item.explicitGuid) {
        slot.newGuids.push(item.guid);
        slot.guid = item.guid;
        slot.guidChanged = true;
      }
      if (slot.id === undefined || item.explicitGuid) byGuid.set(item.guid, slot);
    }
    slot.feedUrl = item.feedUrl;
    if (!byKey.has(keyHex)) {
      byKey.set(keyHex, slot);
      if (m.urlSid === null) slot.newUrls.set(keyHex, { hash: item.hash, feedUrl: item.feedUrl });
    }
    return slot;
  });
  return { slots, itemSlots };
}
