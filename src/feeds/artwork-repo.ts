import type { Queryable } from '../db/pool';

// The SQL of artwork thumbnails: whether castsync knows an artwork URL, and the copies kept of it.

export type ThumbnailRow = { fetched_at: Date; image: Buffer | null; error: string | null };

const HASH = `sha256(convert_to($1::text, 'UTF8'))`;

/** Whether a feed or an item names `url` as its artwork. */
export async function known(db: Queryable, url: string): Promise<boolean> {
  const r = await db.query(
    `SELECT EXISTS (SELECT 1 FROM feeds WHERE artwork_url = $1)
         OR EXISTS (SELECT 1 FROM feed_items WHERE artwork_url = $1) AS known`,
    [url],
  );
  return r.rows[0].known === true;
}

/** The copy kept of `url` at `width`, if any. */
export async function kept(db: Queryable, url: string, width: number): Promise<ThumbnailRow | undefined> {
  const r = await db.query<ThumbnailRow>(
    `SELECT fetched_at, image, error FROM artwork_thumbnails WHERE url_hash = ${HASH} AND width = $2`,
    [url, width],
  );
  return r.rows[0];
}

/** Keeps what a fetch of `url` gave: an image for each width, or why there is none (for every width). */
export async function save(
  db: Queryable,
  url: string,
  outcome: { images: Map<number, Buffer> } | { error: string; widths: readonly number[] },
): Promise<void> {
  const widths = 'images' in outcome ? [...outcome.images.keys()] : outcome.widths;
  const images = 'images' in outcome ? [...outcome.images.values()] : widths.map(() => null);
  const error = 'error' in outcome ? outcome.error.slice(0, 500) : null;
  await db.query(
    `INSERT INTO artwork_thumbnails (url_hash, width, url, fetched_at, image, error)
     SELECT ${HASH}, w, $1, now(), i, $4 FROM unnest($2::int[], $3::bytea[]) AS t(w, i)
     ON CONFLICT (url_hash, width) DO UPDATE
       SET url = EXCLUDED.url, fetched_at = EXCLUDED.fetched_at, image = EXCLUDED.image, error = EXCLUDED.error`,
    [url, widths, images, error],
  );
}
