import { arrayLiteral } from '../db/array-literal';
import type { Queryable } from '../db/pool';
import { ITEM_OF_EPISODE_SQL, RECORD_OF_PODCAST } from '../episodes/service';
import { CURRENT_URL_HASH } from '../subscriptions/service';

// The statistics' SQL. The episode actions are the episode service's table: read here only, in the
// user's time zone (docs/stats.md).

export type PlayRow = {
  episodeHash: string;
  podcastHash: string;
  device: string | null;
  started: number | null;
  position: number | null;
  total: number | null;
  /** The feed's duration of the episode, read only for a play without a total (the played rule's length). */
  duration: number | null;
  /** The local date of the play in the user's time zone, YYYY-MM-DD. */
  day: string;
};

/**
 * The user's plays in the order they happened, up to the end of local day `to` (all of them without).
 * They come as one text of a line per play, fields between spaces: 20,000 rows of seven columns cost the
 * driver several times what the statement does, one text a split (bench: stats). No field has a space or
 * a newline: uuids, numbers (-1: none), a date, a device id (A-Z a-z 0-9 . _ -, or * for none).
 */
export async function plays(db: Queryable, userId: number, timeZone: string, to?: string): Promise<PlayRow[]> {
  const r = await db.query<{ plays: string | null }>({
    name: 'stats-plays',
    text: `SELECT string_agg(concat_ws(' ', episode_hash, podcast_hash, coalesce(started, -1), coalesce(position, -1),
                    coalesce(total, -1), to_char(at AT TIME ZONE $2, 'YYYY-MM-DD'), coalesce(device_id, '*'),
                    CASE WHEN total > 0 THEN -1
                         ELSE coalesce((${ITEM_OF_EPISODE_SQL(
                           { hash: 'a.episode_hash', podcastHash: 'a.podcast_hash', guid: 'a.episode_guid' },
                           'i.duration',
                         )}), -1) END),
                    E'\n' ORDER BY at, id) AS plays
             FROM episode_actions a
            WHERE user_id = $1 AND action = 'play'
              AND ($3::date IS NULL OR at < (($3::date + 1)::timestamp AT TIME ZONE $2))`,
    values: [userId, timeZone, to ?? null],
  });
  const number = (text: string | undefined) => (text === '-1' ? null : Number(text));
  return (r.rows[0]?.plays?.split('\n') ?? []).map((line) => {
    const [episodeHash, podcastHash, started, position, total, day, device, duration] = line.split(' ');
    return {
      episodeHash: episodeHash!,
      podcastHash: podcastHash!,
      started: number(started),
      position: number(position),
      total: number(total),
      duration: number(duration),
      day: day!,
      device: device === '*' ? null : device!,
    };
  });
}

export type PodcastRow = {
  podcast_hash: string;
  /** The user's record of the podcast (by any URL it has had), when they have one. */
  record: string | null;
  podcast_url: string;
  title: string | null;
  guid: string | null;
};

/**
 * Each podcast's URL, fetched title and guid: the user's record's (its URL now, the feed at that URL) when
 * they have a record of it by any URL it has had (a merge moves the URLs with the record), else the URL
 * its latest play named.
 */
export async function podcasts(db: Queryable, userId: number, hashes: string[]): Promise<PodcastRow[]> {
  const r = await db.query<PodcastRow>(
    `SELECT p.hash::text AS podcast_hash, s.id::text AS record, COALESCE(s.feed_url, a.podcast_url) AS podcast_url,
            COALESCE(now_at.title, (SELECT f.title FROM feeds f WHERE f.url_hash = p.hash)) AS title,
            s.guid::text AS guid
       FROM unnest($2::uuid[]) AS p (hash)
       JOIN LATERAL (SELECT podcast_url FROM episode_actions
                      WHERE user_id = $1 AND podcast_hash = p.hash AND action = 'play'
                      ORDER BY at DESC, id DESC LIMIT 1) a ON true
       LEFT JOIN subscriptions s ON s.user_id = $1 AND s.id = ${RECORD_OF_PODCAST('p.hash')} AND s.deleted IS NULL
       LEFT JOIN feeds now_at ON now_at.url_hash = ${CURRENT_URL_HASH('s')}`,
    [userId, arrayLiteral(hashes)],
  );
  return r.rows;
}

/** The user's time zone (UTC unless set) and today's date in it. */
export async function zone(db: Queryable, userId: number): Promise<{ time_zone: string; today: string }> {
  const r = await db.query<{ time_zone: string; today: string }>(
    `SELECT coalesce(z.time_zone, 'UTC') AS time_zone,
            to_char(now() AT TIME ZONE coalesce(z.time_zone, 'UTC'), 'YYYY-MM-DD') AS today
       FROM (SELECT $1::bigint AS user_id) u LEFT JOIN user_time_zones z ON z.user_id = u.user_id`,
    [userId],
  );
  return r.rows[0]!;
}

/** Whether PostgreSQL knows the time zone by this name. */
export async function knownZone(db: Queryable, name: string): Promise<boolean> {
  const r = await db.query('SELECT 1 FROM pg_timezone_names WHERE name = $1', [name]);
  return r.rowCount === 1;
}

/** The time zones to choose from: region names, and UTC. */
export async function zoneNames(db: Queryable): Promise<string[]> {
  const r = await db.query<{ name: string }>(
    `SELECT name FROM pg_timezone_names
      WHERE name = 'UTC' OR (name ~ '^(Africa|America|Antarctica|Asia|Atlantic|Australia|Europe|Indian|Pacific)/')
      ORDER BY name`,
  );
  return r.rows.map((row) => row.name);
}

export async function setZone(db: Queryable, userId: number, timeZone: string): Promise<void> {
  await db.query(
    `INSERT INTO user_time_zones (user_id, time_zone) VALUES ($1, $2)
     ON CONFLICT (user_id) DO UPDATE SET time_zone = excluded.time_zone`,
    [userId, timeZone],
  );
}
