import type { Queryable } from '../db/pool';

// The web player's speeds per podcast (table podcast_speeds: this file is its one writer).

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
