import type { Queryable } from '../db/pool';
import { KEYS_OF_PODCAST } from './repo';

// The web player's settings: speeds per podcast, and the person's skip lengths and own speed (tables
// podcast_speeds and player_settings: this file is their one writer).

/**
 * The speed the user chose for the podcast (by its feed's URL hash), if any: under that key, else under
 * another URL of their record of it (chosen before the feed moved, or for a record merged into it).
 */
export async function speedOf(db: Queryable, userId: number, podcastHash: string): Promise<number | undefined> {
  const r = await db.query<{ speed: number }>(
    `SELECT speed FROM podcast_speeds
      WHERE user_id = $1 AND podcast_hash IN ${KEYS_OF_PODCAST('$2::uuid')}
      ORDER BY podcast_hash = $2 DESC LIMIT 1`,
    [userId, podcastHash],
  );
  return r.rows[0]?.speed;
}

/**
 * Keeps the user's speed for the podcast; their own speed (`personal`, what a podcast plays at unless they
 * chose one for it) is kept as no row, so that the podcast follows it when it changes.
 */
export async function setSpeed(
  db: Queryable,
  userId: number,
  podcastHash: string,
  speed: number,
  personal = 1,
): Promise<void> {
  // One statement each: what was chosen under another URL of the record gives way to this choice.
  const ofRecord = `podcast_hash IN ${KEYS_OF_PODCAST('$2::uuid')}`;
  if (speed === personal) {
    await db.query(`DELETE FROM podcast_speeds WHERE user_id = $1 AND ${ofRecord}`, [userId, podcastHash]);
    return;
  }
  await db.query(
    `WITH others AS (DELETE FROM podcast_speeds WHERE user_id = $1 AND podcast_hash <> $2 AND ${ofRecord})
     INSERT INTO podcast_speeds (user_id, podcast_hash, speed) VALUES ($1, $2, $3)
     ON CONFLICT (user_id, podcast_hash) DO UPDATE SET speed = EXCLUDED.speed`,
    [userId, podcastHash, speed],
  );
}

export type PlayerSettings = { back: number; forward: number; speed: number };

/** The skip lengths and the speed the user chose, if any. */
export async function settingsOf(db: Queryable, userId: number): Promise<PlayerSettings | undefined> {
  const r = await db.query<PlayerSettings>(
    'SELECT skip_back AS back, skip_forward AS forward, speed FROM player_settings WHERE user_id = $1',
    [userId],
  );
  return r.rows[0];
}

export async function setSettings(
  db: Queryable,
  userId: number,
  { back, forward, speed }: PlayerSettings,
): Promise<void> {
  await db.query(
    `INSERT INTO player_settings (user_id, skip_back, skip_forward, speed) VALUES ($1, $2, $3, $4)
     ON CONFLICT (user_id) DO UPDATE
       SET skip_back = EXCLUDED.skip_back, skip_forward = EXCLUDED.skip_forward, speed = EXCLUDED.speed`,
    [userId, back, forward, speed],
  );
}
