// The one played rule (docs/glossary.md, "played"). Every door and every page asks it, in TypeScript
// through `reachedEnd` and `playedOf`, in SQL through `PLAYED_SQL`:
// - a play reached the end when it stopped within the last 5 % of the episode's length: the play's
//   `total` when the app sent one (more than 0), else the duration its feed declares; with neither, a
//   play never counts as played by its position alone;
// - the episode is played when its latest play (by the app's time) reached the end and no "new" (the
//   gpodder action AntennaPod sends for "mark unplayed", which `/v1`'s `played_status` false and the sync
//   draft's `unplayed` are stored as) is later than that play. A "new" at the very time of the play loses.
// Arrival order never matters: the latest of each action is the latest by the app's time.

/** A play within the last 5 % of the episode's length reached its end: apps stop a little short. */
export const PLAYED_SHARE = 0.95;

/** The episode's length in seconds: the play's total when the app sent one, else the feed's duration. */
export const lengthOf = (total: number | null | undefined, duration: number | null | undefined): number | null =>
  total != null && total > 0 ? total : duration != null && duration > 0 ? duration : null;

/** Whether a play that stopped at `position` reached the end of an episode of `length` seconds. */
export const reachedEnd = (position: number, length: number | null): boolean =>
  length !== null && length > 0 && position >= PLAYED_SHARE * length;

/** A stored action as the rule reads it: the app's time, and for a play its position and total. */
export type RuleAction = { at: Date; position?: number | null; total?: number | null };

/**
 * Whether the episode is played, and since when: its latest play reached the end (`duration`: the feed's)
 * and no later "new" undid it; the time is that of the action that decided it (none: never played).
 */
export function playedOf(
  play: RuleAction | undefined,
  marked: RuleAction | undefined,
  duration: number | null,
): { value: boolean; at: Date } | undefined {
  if (marked && (!play || marked.at > play.at)) return { value: false, at: marked.at };
  if (!play || play.position == null) return undefined;
  return { value: reachedEnd(play.position, lengthOf(play.total, duration)), at: play.at };
}

/**
 * The rule in SQL, for the queries that must decide in the database: each argument is an SQL expression
 * of the latest play's position, total and time, the feed's duration, and the latest "new"'s time (NULL
 * when there is none). True exactly when `playedOf` says played.
 */
export const PLAYED_SQL = (p: { position: string; total: string; duration: string; playAt: string; newAt: string }) =>
  `coalesce(${p.position} IS NOT NULL AND (${p.newAt} IS NULL OR ${p.newAt} <= ${p.playAt})
    AND ${p.position} >= ${PLAYED_SHARE}::float8 * CASE WHEN ${p.total} > 0 THEN ${p.total}
                                                        WHEN ${p.duration} > 0 THEN ${p.duration} END, false)`;

/**
 * SQL: the feed's item of an episode, whose duration the rule reads: the item with the episode's enclosure
 * key, else the one with its guid within its podcast (each argument an SQL expression).
 */
export const ITEM_OF_EPISODE_SQL = (e: { hash: string; podcastHash: string; guid: string }, columns: string) =>
  `SELECT ${columns} FROM feed_items i
    WHERE i.enclosure_hash = ${e.hash} OR (i.feed_hash = ${e.podcastHash} AND i.item_key = ${e.guid})
    ORDER BY i.enclosure_hash = ${e.hash} DESC LIMIT 1`;
