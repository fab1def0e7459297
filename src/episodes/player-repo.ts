import type { Queryable } from '../db/pool';

// The web player's settings: speeds per podcast and skip lengths (tables podcast_speeds and
// player_settings: this file is their one writer).

/** The speed the user chose for the podcast (by its feed's URL hash), if any. */
export async function speedOf(db: Queryable, userId: number, podcastHash: string): Promise<number | undefined> {
  const r = await db.query<{ speed: number }>(
    'SELECT speed FROM podcast_speeds WHERE user_id = $1 AND podcast_hash = $2',
    [userId, podcastHash],
  );
  return r.rows[0]?.speed;
}

/** Keeps the user's speed for the podcast; 1 (the normal speed) is kept as no row. */
export async function setSpeed(db: Queryable, userId: number, podcastHash: string, speed: number): Promise<void> {
  if (speed === 1) {
    await db.query('DELETE FROM podcast_speeds WHERE user_id = $1 AND podcast_hash = $2', [userId, podcastHash]);
    return;
  }
  await db.query(
    `INSERT INTO podcast_speeds (user_id, podcast_hash, speed) VALUES ($1, $2, $3)
     ON CONFLICT (user_id, podcast_hash) DO UPDATE SET speed = EXCLUDED.speed`,
    [userId, podcastHash, speed],
  );
}

export type SkipLengths = { back: number; forward: number };

/** The skip lengths the user chose, if any. */
export async function skipLengthsOf(db: Queryable, userId: number): Promise<SkipLengths | undefined> {
  const r = await db.query<SkipLengths>(
    'SELECT skip_back AS back, skip_forward AS forward FROM player_settings WHERE user_id = $1',
    [userId],
  );
  return r.rows[0];
}

export async function setSkipLengths(db: Queryable, userId: number, { back, forward }: SkipLengths): Promise<void> {
  await db.query(
    `INSERT INTO player_settings (user_id, skip_back, skip_forward) VALUES ($1, $2, $3)
     ON CONFLICT (user_id) DO UPDATE SET skip_back = EXCLUDED.skip_back, skip_forward = EXCLUDED.skip_forward`,
    [userId, back, forward],
  );
}
