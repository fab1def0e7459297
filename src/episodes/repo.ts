import { arrayLiteral, type ArrayElement } from '../db/array-literal';
import { NEXT_STAMP } from '../db/change-stamp';
import type { Queryable } from '../db/pool';
import { missingUser } from '../errors';

export type ActionWrite = {
  podcastUrl: string;
  podcastHash: string;
  episodeUrl: string;
  episodeHash: string;
  guid: string | null;
  action: string;
  at: Date;
  started: number | null;
  position: number | null;
  total: number | null;
  device: string | null;
};

/** One field of every row, as an array parameter (times as ISO strings). */
function column<K extends keyof ActionWrite>(rows: ActionWrite[], k: K): string {
  return arrayLiteral(
    rows.map((r): ArrayElement => {
      const v = r[k];
      return v instanceof Date ? v.toISOString() : v;
    }),
  );
}

/**
 * SQL: one action as JSON text in the gpodder.net episode-action format, the one every app and sync server
 * reads: podcast, episode, guid when known, action, timestamp as YYYY-MM-DDTHH:MM:SS in UTC, device when
 * known, and started, position and total when stored (a play's). Compact and in this field order, as
 * JSON.stringify writes it (to_json escapes strings as JSON does). Written once, when the action is stored
 * (the `json` column), so that a full download costs a concatenation (migration 14 has the same text).
 */
export const ACTION_JSON = (x: string) => `'{"podcast":' || to_json(${x}.podcast_url)::text
     || ',"episode":' || to_json(${x}.episode_url)::text
     || coalesce(',"guid":' || to_json(${x}.guid)::text, '')
     || ',"action":' || to_json(${x}.action)::text
     || ',"timestamp":"' || to_char(${x}.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') || '"'
     || coalesce(',"device":' || to_json(${x}.device)::text, '')
     || coalesce(',"started":' || ${x}.started, '')
     || coalesce(',"position":' || ${x}.position, '')
     || coalesce(',"total":' || ${x}.total, '')
     || '}'`;

/**
 * SQL: the id of the user's (`user`, else $1) subscription record whose URL, current or earlier, has the key `hash` (an
 * action's podcast is that record, under whatever URL of it the app named); null when none has.
 */
export const RECORD_OF_PODCAST = (
  hash: string,
  user = '$1',
) => `(SELECT s.id FROM subscriptions s WHERE s.user_id = ${user} AND s.url_hash = ${hash}
                 UNION ALL
                 SELECT x.subscription_id FROM subscription_urls x WHERE x.user_id = ${user} AND x.url_hash = ${hash}
                 LIMIT 1)`;

/**
 * SQL: the key `hash` of a podcast and the keys of every URL, current or earlier, of the user's record of it
 * (a feed that moved, records merged into the one kept); the key alone when the user has no record of it.
 * For what a person chose per podcast (a speed, notifications off), kept under the key its URL had then.
 */
export const KEYS_OF_PODCAST = (hash: string, user = '$1') => `(
  SELECT ${hash} AS url_hash
  UNION ALL
  SELECT u.url_hash FROM subscriptions r
   CROSS JOIN LATERAL (SELECT r.url_hash
                       UNION ALL
                       SELECT x.url_hash FROM subscription_urls x
                        WHERE x.user_id = r.user_id AND x.subscription_id = r.id) u
   WHERE r.user_id = ${user} AND r.id = ${RECORD_OF_PODCAST(hash, user)})`;

/** The fields of a batch, in the order of the statement's arrays ($2 to $12). */
const BATCH_FIELDS = [
  'podcastUrl',
  'podcastHash',
  'episodeUrl',
  'episodeHash',
  'guid',
  'action',
  'at',
  'started',
  'position',
  'total',
  'device',
] as const;

const INSERT_ACTIONS = `WITH stamp AS (UPDATE users SET last_change = ${NEXT_STAMP} WHERE id = $1 RETURNING last_change AS at),
       batch AS (
         SELECT * FROM unnest($2::text[], $3::uuid[], $4::text[], $5::uuid[], $6::text[], $7::text[],
                              $8::timestamptz[], $9::int[], $10::int[], $11::int[], $12::text[]) WITH ORDINALITY
             AS b (podcast_url, podcast_hash, episode_url, episode_hash, guid, action, at, started, position, total, device, ord)),
       devices_named AS (
         INSERT INTO devices (user_id, device_id, caption)
         SELECT DISTINCT $1::bigint, device, device FROM batch WHERE device IS NOT NULL
         ON CONFLICT (user_id, device_id) DO NOTHING),
       stored AS (
         INSERT INTO episode_actions (user_id, podcast_url, podcast_hash, subscription_id, episode_url, episode_hash,
                                      episode_guid, action, at, started, position, total, device_id, changed, json)
         SELECT $1, b.podcast_url, b.podcast_hash,
                ${RECORD_OF_PODCAST('b.podcast_hash')},
                b.episode_url, b.episode_hash, b.guid, b.action, b.at, b.started, b.position, b.total, b.device, stamp.at,
                ${ACTION_JSON('b')}
           FROM batch b CROSS JOIN stamp
          ORDER BY b.ord
         ON CONFLICT DO NOTHING
         RETURNING id, episode_hash, action, at, changed),
       latest AS (
         INSERT INTO episode_latest (user_id, episode_hash, action, action_id, at, changed)
         SELECT DISTINCT ON (episode_hash, action) $1, episode_hash, action, id, at, changed FROM stored
          ORDER BY episode_hash, action, at DESC, id DESC
         ON CONFLICT (user_id, episode_hash, action) DO UPDATE
           SET action_id = excluded.action_id, at = excluded.at, changed = excluded.changed
           WHERE (excluded.at, excluded.action_id) > (episode_latest.at, episode_latest.action_id))
     SELECT at, (SELECT count(*) FROM stored) AS stored FROM stamp`;

/**
 * A batch of actions in one statement (so one round trip and one transaction): the user's change stamp,
 * the devices the batch names (created if new), the actions (an action already stored is skipped), each
 * linked to the user's record for its podcast (by any URL the record had), and each episode's latest
 * action of each type. Returns the stamp, and how many actions were new.
 */
export async function insertActions(
  db: Queryable,
  userId: number,
  rows: ActionWrite[],
): Promise<{ at: Date; stored: number }> {
  const r = await db.query<{ at: Date; stored: number }>({
    name: 'insert-episode-actions',
    text: INSERT_ACTIONS,
    values: [userId, ...BATCH_FIELDS.map((f) => column(rows, f))],
  });
  const row = r.rows[0];
  if (!row) throw missingUser(userId);
  return row;
}

export type ActionRow = {
  id: number;
  podcast_url: string;
  episode_url: string;
  episode_guid: string | null;
  action: string;
  at: Date;
  started: number | null;
  position: number | null;
  total: number | null;
  device_id: string | null;
  changed: Date;
};

export type ActionFilter = {
  /** The podcast's URL key, and the record it belongs to (its actions under any URL), if any. */
  podcastHash?: string | undefined;
  subscriptionId?: number | undefined;
  /** One device's actions, and the account's: those uploaded naming no device (docs/apps.md, Music Assistant). */
  device?: string | undefined;
};

const ACTION_COLUMNS = `a.id, a.podcast_url, a.episode_url, a.episode_guid, a.action, a.at, a.started, a.position,
       a.total, a.device_id, a.changed`;

/** Where a page of a download starts: after this change stamp and id (as PostgreSQL wrote them). */
export type ActionCursor = { changed: string; id: string };

/** Where a download `since` starts: at the stamp, whatever the id; at the beginning without one. */
export const cursorAt = (since: Date | undefined): ActionCursor => ({
  changed: since?.toISOString() ?? '-infinity',
  id: '0',
});

export type ActionPage = {
  /** The page's actions as the elements of a JSON array (comma-separated, without brackets); '' for none. */
  json: string;
  /** The last action of the page; undefined for an empty page. */
  last: ActionCursor | undefined;
  /** A full page: more may follow (a download whose last page is full ends with an empty one). */
  more: boolean;
  /** The clock at the read. */
  readAt: Date;
  /** On the last page: no write of the user was under way or committed since the read's snapshot. */
  settled: boolean;
};

/**
 * A page of the user's actions after `after` (by change stamp, then id: the order stored), at most `size`,
 * as JSON text; or, aggregated, of each episode's latest action of each type. The JSON was written with
 * each action: a page costs a concatenation, and the process no row objects at all (docs/performance.md).
 * A download reads page after page, each in a statement of its own, so that neither side holds more than
 * a page (docs/decisions/streamed-downloads.md).
 *
 * The last page (one shorter than `size`) is also the hold on the user's writers (docs/decisions/sync-stamps.md):
 * it locks the user's row FOR SHARE, skipping it if a writer holds it, and compares the row's newest
 * `last_change` (what a lock sees) with the one in the statement's snapshot (what the read sees). Locked
 * and unchanged (`settled`), no write of the user committed after the snapshot, and every later one waits
 * for the lock and is stamped after the read's clock. Otherwise (a writer under way, one that committed
 * meanwhile, or no such user) the caller reads the rest again inside a transaction that holds the writers.
 * The pages before it lock nothing: a write that commits between two pages is stamped after every action
 * already read (stamps follow commit order), so a later page reads it.
 */
export async function actionPage(
  db: Queryable,
  userId: number,
  f: ActionFilter,
  aggregated: boolean,
  after: ActionCursor,
  size: number,
): Promise<ActionPage> {
  const filters = `AND ($4::uuid IS NULL OR a.podcast_hash = $4 OR a.subscription_id = $5)
                   AND ($6::text IS NULL OR a.device_id = $6 OR a.device_id IS NULL)`;
  const page = aggregated
    ? `SELECT l.changed, l.action_id AS id, a.json
         FROM episode_latest l JOIN episode_actions a ON a.user_id = l.user_id AND a.id = l.action_id
        WHERE l.user_id = $1 AND (l.changed, l.action_id) > ($2::timestamptz, $3::bigint) ${filters}
        ORDER BY l.changed, l.action_id LIMIT $7`
    : `SELECT a.changed, a.id, a.json FROM episode_actions a
        WHERE a.user_id = $1 AND (a.changed, a.id) > ($2::timestamptz, $3::bigint) ${filters}
        ORDER BY a.changed, a.id LIMIT $7`;
  // A full page may have more after it; a short one is the last, and only the last locks the user's row.
  // The aggregates take the page in the order it is read (no sort on PostgreSQL 16 and later).
  const r = await db.query<{
    read_at: Date;
    n: number;
    settled: boolean | null;
    json: string | null;
    last_changed: string | null;
    last_id: string | null;
  }>({
    name: aggregated ? 'episode-latest-page-json' : 'episode-actions-page-json',
    text: `SELECT clock_timestamp() AS read_at, p.n, p.json, p.last_changed::text, p.ids[p.n]::text AS last_id,
                  CASE WHEN p.n < $7 THEN
                    (SELECT u.last_change = seen.last_change
                       FROM users u CROSS JOIN (SELECT last_change FROM users WHERE id = $1) seen
                      WHERE u.id = $1 FOR SHARE OF u SKIP LOCKED) END AS settled
             FROM (SELECT count(*)::int AS n, string_agg(x.json, ',' ORDER BY x.changed, x.id) AS json,
                          max(x.changed) AS last_changed, array_agg(x.id ORDER BY x.changed, x.id) AS ids
                     FROM (${page}) x) p`,
    values: [userId, after.changed, after.id, f.podcastHash ?? null, f.subscriptionId ?? null, f.device ?? null, size],
  });
  const row = r.rows[0]!;
  return {
    json: row.json ?? '',
    last:
      row.last_changed === null || row.last_id === null ? undefined : { changed: row.last_changed, id: row.last_id },
    more: row.n === size,
    readAt: row.read_at,
    settled: row.settled === true,
  };
}

/** Removes every action of the user; returns how many. */
export async function deleteAllActions(tx: Queryable, userId: number): Promise<number> {
  const r = await tx.query<{ n: number }>(
    `WITH latest AS (DELETE FROM episode_latest WHERE user_id = $1),
          gone AS (DELETE FROM episode_actions WHERE user_id = $1 RETURNING 1)
     SELECT count(*)::int AS n FROM gone`,
    [userId],
  );
  return r.rows[0]?.n ?? 0;
}

/**
 * Removes the actions of a record's podcast (by the record, and by any URL the record has had), stamped
 * `stamp`. An episode whose latest action of a type was one of them and that has others of that type
 * (the same file in another feed) gets the latest of those as its state again, changed at `stamp` so
 * that the apps syncing changes learn it.
 */
export async function deleteActionsOf(
  db: Queryable,
  userId: number,
  subscriptionId: number,
  stamp: Date,
): Promise<void> {
  // One statement: its reads see the actions as they were before its deletes, so the ones gone are left
  // out by id.
  await db.query(
    `WITH hashes AS (
       SELECT url_hash FROM subscriptions WHERE user_id = $1 AND id = $2
       UNION SELECT url_hash FROM subscription_urls WHERE user_id = $1 AND subscription_id = $2),
     gone AS (
       DELETE FROM episode_actions a WHERE a.user_id = $1
          AND (a.subscription_id = $2 OR a.podcast_hash IN (SELECT url_hash FROM hashes))
       RETURNING a.id),
     dropped AS (
       DELETE FROM episode_latest l WHERE l.user_id = $1 AND l.action_id IN (SELECT id FROM gone)
       RETURNING l.episode_hash, l.action)
     INSERT INTO episode_latest (user_id, episode_hash, action, action_id, at, changed)
     SELECT DISTINCT ON (a.episode_hash, a.action) $1, a.episode_hash, a.action, a.id, a.at, $3
       FROM episode_actions a JOIN dropped d ON d.episode_hash = a.episode_hash AND d.action = a.action
      WHERE a.user_id = $1 AND a.id NOT IN (SELECT id FROM gone)
      ORDER BY a.episode_hash, a.action, a.at DESC, a.id DESC`,
    [userId, subscriptionId, stamp],
  );
}

/**
 * Waits for the user's writes under way and keeps new ones out until the transaction ends: after this,
 * every later write of the user is stamped later than the clock now (FOR SHARE conflicts with the
 * writers' row lock).
 */
export async function holdWriters(tx: Queryable, userId: number): Promise<void> {
  await tx.query('SELECT 1 FROM users WHERE id = $1 FOR SHARE', [userId]);
}

/** Where a read of the user's actions in the order stored stopped: the last action read. */
export type HistoryCursor = { changed: Date; id: number };

/**
 * The user's actions after `after` (all from the first without), in the order stored, `limit` at most,
 * with the podcast's guid when the action belongs to a subscription. A page starts after the last action
 * of the one before, not at an offset: an action removed meanwhile (EPISODE_HISTORY_RETENTION_DAYS)
 * moves no later one out of reach.
 */
export async function actionsAfter(
  db: Queryable,
  userId: number,
  after: HistoryCursor | undefined,
  limit: number,
): Promise<(ActionRow & { podcast_guid: string | null })[]> {
  const r = await db.query<ActionRow & { podcast_guid: string | null }>({
    name: 'episode-actions-after',
    text: `SELECT ${ACTION_COLUMNS}, s.guid AS podcast_guid FROM episode_actions a
             LEFT JOIN subscriptions s ON s.user_id = a.user_id AND s.id = a.subscription_id
            WHERE a.user_id = $1 AND (a.changed, a.id) > (coalesce($2::timestamptz, '-infinity'), coalesce($3::bigint, 0))
            ORDER BY a.changed, a.id LIMIT $4`,
    values: [userId, after?.changed ?? null, after?.id ?? null, limit],
  });
  return r.rows;
}

/**
 * The user's newest play actions: the newest upload first, and within one upload the newest play first (by
 * its own time, not its place in the batch); with the podcast's title when the fetcher knows it.
 */
export async function recentPlays(
  db: Queryable,
  userId: number,
  limit: number,
): Promise<(ActionRow & { podcast_title: string | null; episode_title: string | null })[]> {
  // The episode's title from its feed's items: by the enclosure URL's key, else by guid in the podcast.
  const r = await db.query<ActionRow & { podcast_title: string | null; episode_title: string | null }>(
    `SELECT ${ACTION_COLUMNS}, f.title AS podcast_title,
            coalesce((SELECT i.title FROM feed_items i WHERE i.enclosure_hash = a.episode_hash LIMIT 1),
                     (SELECT i.title FROM feed_items i
                       WHERE i.feed_hash = a.podcast_hash AND i.item_key = a.episode_guid)) AS episode_title
       FROM episode_actions a LEFT JOIN feeds f ON f.url_hash = a.podcast_hash
      WHERE a.user_id = $1 AND a.action = 'play'
      ORDER BY a.changed DESC, a.at DESC, a.id DESC LIMIT $2`,
    [userId, limit],
  );
  return r.rows;
}
