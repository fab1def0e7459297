import type { Queryable } from '../db/pool';
import { cleanText } from '../text';

// What an app sent when castsync skipped some of it, and why: shown on the web page's Devices. Only
// uploads with something skipped or kept are noted: a clean upload costs no statement more than before
// (an episode batch is one statement, test/integration/round-trips.test.ts), and the device's last sync
// is its `last_seen`. Diagnostics, bounded: the newest KEEP reports of each device (or, for apps that name
// no device, of each client) are kept.

const KEEP = 20;
/** Skipped items kept per report, and their text's length. */
const MAX_ITEMS = 20;
const MAX_TEXT = 300;

export type ReportKind = 'subscriptions' | 'episode actions';
export type SkippedItem = { item: string; reason: string };
export type SyncReport = {
  /** The gpodder device id; undefined for an app that names none (Nextcloud mode). */
  device: string | undefined;
  client: string;
  at: Date;
  kind: ReportKind;
  /** Counts of what was sent, by name: add, remove, actions. */
  sent: Record<string, number>;
  skipped: SkippedItem[];
};

/** Capped, and cleaned of what cannot be stored (the cut can split a surrogate pair): a report shows what was refused, such text included. */
const cut = (s: string) => cleanText(s.length > MAX_TEXT ? `${s.slice(0, MAX_TEXT)}…` : s);

/** Notes an upload that had something skipped, and forgets the source's reports beyond the newest KEEP (one statement); a clean upload notes nothing. */
export async function note(
  db: Queryable,
  userId: number,
  r: {
    device: string | undefined;
    client: string | undefined;
    kind: ReportKind;
    sent: Record<string, number>;
    skipped: SkippedItem[];
  },
): Promise<void> {
  if (r.skipped.length === 0) return;
  const skipped = r.skipped.slice(0, MAX_ITEMS).map((s) => ({ item: cut(s.item), reason: cut(s.reason) }));
  await db.query(
    `WITH added AS (
       INSERT INTO sync_reports (user_id, device_id, client, kind, sent, skipped)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING id)
     DELETE FROM sync_reports
      WHERE user_id = $1 AND device_id IS NOT DISTINCT FROM $2 AND client = $3
        AND id < (SELECT min(id) FROM (SELECT id FROM sync_reports
                                        WHERE user_id = $1 AND device_id IS NOT DISTINCT FROM $2 AND client = $3
                                        ORDER BY id DESC LIMIT ${KEEP - 1}) newest)`,
    [
      userId,
      r.device ?? null,
      cleanText((r.client ?? '').slice(0, 200)),
      r.kind,
      JSON.stringify(r.sent),
      JSON.stringify(skipped),
    ],
  );
}

type Row = {
  device_id: string | null;
  client: string;
  at: Date;
  kind: ReportKind;
  sent: Record<string, number>;
  skipped: SkippedItem[];
};

/** The user's reports, newest first, at most `perSource` of each device or client. */
export async function recent(db: Queryable, userId: number, perSource = 5): Promise<SyncReport[]> {
  const r = await db.query<Row>(
    `SELECT device_id, client, at, kind, sent, skipped FROM (
       SELECT *, row_number() OVER (PARTITION BY device_id, client ORDER BY id DESC) AS n
         FROM sync_reports WHERE user_id = $1) x
      WHERE n <= $2 ORDER BY id DESC`,
    [userId, perSource],
  );
  return r.rows.map((x) => ({
    device: x.device_id ?? undefined,
    client: x.client,
    at: x.at,
    kind: x.kind,
    sent: x.sent,
    skipped: x.skipped,
  }));
}
