import { arrayLiteral } from '../db/array-literal';
import type { Queryable } from '../db/pool';
import { matchesAndRecordsOf, type AlsoWritten, type Item, type Matches } from '../subscriptions/service';

// The sync endpoint's SQL: its own tables (sync_subscription_changes, sync_actions), and reads of the
// subscription records it presents (written only through the subscription service).

/** A record with the latest sync action's change of it, if any. */
export type EntityRow = {
  id: number;
  sync_id: string;
  guid: string;
  feed_url: string;
  is_subscribed: boolean;
  subscription_changed: Date;
  deleted: Date | null;
  changed: Date;
  subscribed_at: Date | null;
  unsubscribed_at: Date | null;
  occurred_at: Date | null;
  stamp: Date | null;
  client_id: string | null;
};

/**
 * SQL: a record's sync_id. It is stored only once the record's guid changed; until then it is the guid the
 * record was made with (migration 1763800000095).
 */
const syncIdOf = (s: string) => `coalesce(${s}.sync_id, ${s}.guid)`;

const ENTITY = `s.id, ${syncIdOf('s')} AS sync_id, s.guid, s.feed_url, s.is_subscribed, s.subscription_changed, s.deleted, s.changed,
       c.subscribed_at, c.unsubscribed_at, c.occurred_at, c.stamp, c.client_id`;
const FROM = `subscriptions s LEFT JOIN sync_subscription_changes c ON c.user_id = s.user_id AND c.subscription_id = s.id`;

/** The user's records with these sync ids. */
export async function bySyncIds(db: Queryable, userId: number, syncIds: string[]): Promise<EntityRow[]> {
  const r = await db.query<EntityRow>({
    name: 'sync-by-sync-ids',
    // By the stored ids' index and the guids' (for the records whose id is their guid).
    text: `SELECT ${ENTITY} FROM ${FROM}
            WHERE s.user_id = $1 AND (s.sync_id = ANY($2::uuid[]) OR (s.sync_id IS NULL AND s.guid = ANY($2::uuid[])))`,
    values: [userId, syncIds],
  });
  return r.rows;
}

/** What a batch's subscribes read: the service's matches of each, and the record the endpoint shows for it. */
export type SubscribeReads = Matches & { found: (EntityRow | undefined)[] };

/**
 * For each subscribe, in their order: what its guid and URL match, as the subscription service plans with
 * them, and the record it names: a subscribed one that has its guid or its URL (any it had) first, as the
 * draft says a subscribe of a feed the user is subscribed to by either is ignored; else by guid, then URL.
 * One statement for a batch, a few index probes per subscribe.
 */
export async function findMatches(db: Queryable, userId: number, items: Item[]): Promise<SubscribeReads> {
  const read = { name: 'sync-find-matches', columns: ENTITY, from: FROM };
  const r = await matchesAndRecordsOf<EntityRow>(db, userId, items, read);
  return { lastChange: r.lastChange, matches: r.matches, found: r.records };
}

/** The id of the record that has this guid, now or earlier. */
export async function guidOwner(db: Queryable, userId: number, guid: string): Promise<number | undefined> {
  const r = await db.query<{ id: number }>(
    `SELECT id FROM subscriptions WHERE user_id = $1 AND guid = $2
     UNION ALL SELECT subscription_id FROM subscription_guids WHERE user_id = $1 AND guid = $2 LIMIT 1`,
    [userId, guid],
  );
  return r.rows[0]?.id;
}

export type ChangeNote = {
  subscribedAt: Date;
  unsubscribedAt: Date | null;
  occurredAt: Date;
  clientId: string | null;
};

/** Notes a sync action's change of a record, stamped with the record's change stamp as it is now. */
export async function noteChange(tx: Queryable, userId: number, id: number, n: ChangeNote): Promise<void> {
  await tx.query(
    `INSERT INTO sync_subscription_changes AS c
            (user_id, subscription_id, subscribed_at, unsubscribed_at, occurred_at, stamp, client_id)
     SELECT $1, s.id, $3, $4, $5, s.changed, $6 FROM subscriptions s WHERE s.user_id = $1 AND s.id = $2
     ${NOTE_CONFLICT}`,
    [userId, id, n.subscribedAt, n.unsubscribedAt, n.occurredAt, n.clientId],
  );
}

const NOTE_CONFLICT = `ON CONFLICT (user_id, subscription_id) DO UPDATE
        SET subscribed_at = EXCLUDED.subscribed_at, unsubscribed_at = EXCLUDED.unsubscribed_at,
            occurred_at = EXCLUDED.occurred_at, stamp = EXCLUDED.stamp, client_id = EXCLUDED.client_id`;

/**
 * Notes the subscribes of a batch that subscribed the records with these current guids (subscribed at the
 * app's time of each, pairwise), in one statement; returns each record as it is now.
 */
export async function noteSubscribes(
  tx: Queryable,
  userId: number,
  clientId: string | null,
  notes: { guid: string; at: Date }[],
): Promise<EntityRow[]> {
  const r = await tx.query<EntityRow>({
    name: 'sync-note-subscribes',
    text: `WITH noted AS (
       INSERT INTO sync_subscription_changes AS c
              (user_id, subscription_id, subscribed_at, unsubscribed_at, occurred_at, stamp, client_id)
       SELECT $1, s.id, n.at, NULL, n.at, s.changed, $2
         FROM unnest($3::uuid[], $4::timestamptz[]) WITH ORDINALITY AS n (guid, at, ord)
         JOIN subscriptions s ON s.user_id = $1 AND s.guid = n.guid
        ORDER BY n.ord
       ${NOTE_CONFLICT}
       RETURNING *)
     SELECT ${ENTITY} FROM noted c JOIN subscriptions s ON s.user_id = $1 AND s.id = c.subscription_id`,
    values: [
      userId,
      clientId,
      arrayLiteral(notes.map((n) => n.guid)),
      arrayLiteral(notes.map((n) => n.at.toISOString())),
    ],
  });
  return r.rows;
}

/** A subscribe of a batch of new feeds: the guid of its record, its time, and its action id. */
export type NewSubscribe = { guid: string; at: Date; actionId: string };

/** A record a batch of new feeds created, as the insert returns it (subscribed, and noted as the batch's). */
export type CreatedRow = Pick<EntityRow, 'sync_id' | 'guid' | 'feed_url' | 'changed'>;

/**
 * SQL the insert of a batch's new feeds runs in its statement (see subscriptions' AlsoWritten): the note
 * of each subscribe and its action id, kept as applied, for the records created (`created`, joined by
 * guid). A kept action id makes the statement fail on sync_actions' key: that batch takes the general way.
 */
export function newSubscribesWrite(clientId: string | null, subscribes: NewSubscribe[]): AlsoWritten {
  const actions = `unnest($7::uuid[], $8::timestamptz[], $9::uuid[]) AS a (guid, at, action_id)`;
  return {
    name: 'sync-subscribe-all-new',
    ctes: `noted AS (
       INSERT INTO sync_subscription_changes
              (user_id, subscription_id, subscribed_at, unsubscribed_at, occurred_at, stamp, client_id)
       SELECT $1, c.id, a.at, NULL, a.at, c.changed, $6 FROM created c JOIN ${actions} ON a.guid = c.guid),
     kept AS (
       INSERT INTO sync_actions (user_id, action_id, type, action, status, entity_id)
       SELECT $1, a.action_id, 'subscription', 'subscribe', 'applied', ${syncIdOf('c')} FROM created c JOIN ${actions} ON a.guid = c.guid)`,
    columns: `${syncIdOf('c')} AS sync_id, c.guid, c.feed_url, c.changed`,
    values: [
      clientId,
      arrayLiteral(subscribes.map((x) => x.guid)),
      arrayLiteral(subscribes.map((x) => x.at.toISOString())),
      arrayLiteral(subscribes.map((x) => x.actionId)),
    ],
  };
}

export type StoredAction = {
  action_id: string;
  type: string;
  action: string;
  status: string;
  entity_id: string;
};

/** The actions of these ids the user's batches already applied or ignored. */
export async function storedActions(tx: Queryable, userId: number, actionIds: string[]): Promise<StoredAction[]> {
  const r = await tx.query<StoredAction>(
    `SELECT action_id, type, action, status, entity_id FROM sync_actions WHERE user_id = $1 AND action_id = ANY($2::uuid[])`,
    [userId, actionIds],
  );
  return r.rows;
}

/** Forgets up to `limit` action ids, of every user, that came more than `days` days ago; how many. */
export async function deleteActionsBefore(db: Queryable, days: number, limit: number): Promise<number> {
  const r = await db.query(
    `DELETE FROM sync_actions
      WHERE (user_id, action_id) IN (
        SELECT user_id, action_id FROM sync_actions WHERE received < now() - make_interval(days => $1)
         LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [days, limit],
  );
  return r.rowCount ?? 0;
}

/** Forgets every action id kept of the user: what they applied is gone (start over). */
export async function deleteAllActions(tx: Queryable, userId: number): Promise<void> {
  await tx.query('DELETE FROM sync_actions WHERE user_id = $1', [userId]);
}

/** Keeps what became of a batch's actions, all in one statement. */
export async function storeActions(tx: Queryable, userId: number, rows: StoredAction[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(
    `INSERT INTO sync_actions (user_id, action_id, type, action, status, entity_id)
     SELECT $1, * FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::uuid[])
     ON CONFLICT (user_id, action_id) DO NOTHING`,
    [
      userId,
      rows.map((x) => x.action_id),
      rows.map((x) => x.type),
      rows.map((x) => x.action),
      rows.map((x) => x.status),
      rows.map((x) => x.entity_id),
    ],
  );
}

/**
 * Up to `limit` records changed after `since` (all without it) in the order of their change stamps, leaving
 * out those whose latest change was a sync action of `ownClient`; and the user's last change stamp, in the
 * same statement (one snapshot: every change it does not see is stamped later).
 */
export async function changedAfter(
  db: Queryable,
  userId: number,
  q: { since: Date | undefined; ownClient: string | undefined; limit: number },
): Promise<{ lastChange: Date; rows: EntityRow[] }> {
  const r = await db.query<EntityRow & { last_change: Date; id: number | null }>({
    name: 'sync-changed-after',
    text: `SELECT u.last_change, p.* FROM users u LEFT JOIN LATERAL (
        SELECT ${ENTITY} FROM ${FROM}
         WHERE s.user_id = u.id AND ($2::timestamptz IS NULL OR s.changed > $2)
           AND ($3::uuid IS NULL OR c.client_id IS DISTINCT FROM $3 OR c.stamp <> s.changed)
         ORDER BY s.changed, s.id LIMIT $4) p ON true
      WHERE u.id = $1`,
    values: [userId, q.since ?? null, q.ownClient ?? null, q.limit],
  });
  const first = r.rows[0];
  if (!first) throw new Error(`user ${userId} is gone`);
  return { lastChange: first.last_change, rows: first.id === null ? [] : r.rows };
}

/** The stamps of the (up to `limit`) changes at or before `until`, newest first: where the page before starts. */
export async function stampsUntil(
  db: Queryable,
  userId: number,
  q: { until: Date; ownClient: string | undefined; limit: number },
): Promise<Date[]> {
  const r = await db.query<{ changed: Date }>(
    `SELECT s.changed FROM ${FROM}
      WHERE s.user_id = $1 AND s.changed <= $2
        AND ($3::uuid IS NULL OR c.client_id IS DISTINCT FROM $3 OR c.stamp <> s.changed)
      ORDER BY s.changed DESC, s.id DESC LIMIT $4`,
    [userId, q.until, q.ownClient ?? null, q.limit],
  );
  return r.rows.map((x) => x.changed);
}

/** The records with every change at this one stamp (a page never splits a stamp). */
export async function changedAt(
  db: Queryable,
  userId: number,
  q: { at: Date; ownClient: string | undefined },
): Promise<EntityRow[]> {
  const r = await db.query<EntityRow>(
    `SELECT ${ENTITY} FROM ${FROM}
      WHERE s.user_id = $1 AND s.changed = $2
        AND ($3::uuid IS NULL OR c.client_id IS DISTINCT FROM $3 OR c.stamp <> s.changed)
      ORDER BY s.id`,
    [userId, q.at, q.ownClient ?? null],
  );
  return r.rows;
}

/** A page of the user's records in creation order after the record `after` (an id), subscribed ones only unless `all`. */
export async function recordsPage(
  db: Queryable,
  userId: number,
  q: { after: number; all: boolean; limit: number },
): Promise<EntityRow[]> {
  const r = await db.query<EntityRow>(
    `SELECT ${ENTITY} FROM ${FROM}
      WHERE s.user_id = $1 AND s.id > $2 AND ($3 OR (s.is_subscribed AND s.deleted IS NULL))
      ORDER BY s.id LIMIT $4`,
    [userId, q.after, q.all, q.limit],
  );
  return r.rows;
}
