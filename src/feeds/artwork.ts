import type Sharp from 'sharp';
import type { Context } from '../context';
import { InvalidInput, NotFound } from '../errors';
import { urlForLog } from '../logger';
import * as repo from './artwork-repo';
import { Busy, inTurn } from './documents';
import { fetchDocument, FetchFailed } from './fetch';
import { fetcherSettings } from './fetcher';

// Artwork thumbnails for the web page: an artwork URL castsync knows (a feed's or an item's), fetched when
// first asked for under the feed fetcher's address policy, redirect limit and deadline, with a size cap of
// its own and in turn with the item documents (documents.ts); resized to each of a few widths, encoded as
// WebP and kept in the database, so that every instance serves it and it is fetched once. docs/web.md.

/** The widths made: 56 and 160 px are what the pages show (rows, the episode page), 112 and 320 at 2×. */
export const THUMBNAIL_WIDTHS: readonly number[] = [56, 112, 160, 320];
/** Size cap of the artwork fetched (directories ask for 1400–3000 px; such a JPEG is at most a few MB). */
export const MAX_ARTWORK_BYTES = 10 * 1024 * 1024;
/** Pixels decoded at most (a small file may declare an enormous image). */
const MAX_PIXELS = 40_000_000;
/** A copy is fetched again after this long (a feed may replace its artwork at the same address), a failure sooner. */
const KEEP_MS = { image: 30 * 24 * 3600_000, error: 3600_000 };
const ACCEPT = 'image/webp, image/png, image/jpeg, image/*;q=0.9, */*;q=0.1';

/**
 * sharp, loaded when the first thumbnail is made: its native library takes memory from the moment it is
 * loaded (about 18 MiB), which a server that makes none (most instances, most of the time) never needs.
 * By require: import() would not run under the tests' module registry.
 */
let sharpLoaded: typeof Sharp | undefined;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const loadSharp = (): typeof Sharp => (sharpLoaded ??= require('sharp') as typeof Sharp);

/** A thumbnail: the WebP image, or (none could be had) the artwork's own URL. */
export type Thumbnail = { image: Buffer } | { fallback: string };

const underway = new Map<string, Promise<{ images: Map<number, Buffer> } | { error: string }>>();

/** Why an answer is not taken as artwork: its type says it is something else. */
const notImage = ({ type }: { type: string }) =>
  type === '' || type.startsWith('image/') || type === 'application/octet-stream' ? undefined : `not an image: ${type}`;

/** The artwork resized to each width (cropped to a square, as the pages show it), as WebP. */
async function resized(body: Buffer): Promise<Map<number, Buffer>> {
  const sharp = loadSharp();
  const source = sharp(body, { limitInputPixels: MAX_PIXELS }).rotate();
  const images = await Promise.all(
    THUMBNAIL_WIDTHS.map((w) => source.clone().resize(w, w, { fit: 'cover' }).webp({ quality: 80 }).toBuffer()),
  );
  return new Map(THUMBNAIL_WIDTHS.map((w, k) => [w, images[k]!]));
}

/** Fetches and resizes the artwork at `url`: its thumbnails, or why there are none. */
async function fetchAndResize(ctx: Context, url: string): Promise<{ images: Map<number, Buffer> } | { error: string }> {
  const s = fetcherSettings(ctx.config);
  try {
    const got = await inTurn(() =>
      fetchDocument(url, ACCEPT, {
        policy: s.policy,
        limits: { ...s.limits, maxBytes: MAX_ARTWORK_BYTES },
        admit: notImage,
      }),
    );
    return { images: await resized(got.body) };
  } catch (err) {
    if (err instanceof FetchFailed) return { error: err.message };
    if (err instanceof Busy) throw err;
    // sharp's: the body is no image it can read, or too large a one.
    return { error: `not a readable image: ${(err as Error).message}` };
  }
}

/** Fetches, resizes and keeps the artwork at `url`; one fetch per URL at a time in this process. */
function make(ctx: Context, url: string): Promise<{ images: Map<number, Buffer> } | { error: string }> {
  const pending = underway.get(url);
  if (pending) return pending;
  const making = (async () => {
    const outcome = await fetchAndResize(ctx, url);
    if ('error' in outcome)
      ctx.logger.info({ component: 'feeds', url: urlForLog(url), reason: outcome.error }, 'artwork not had');
    await repo.save(ctx.db, url, 'error' in outcome ? { ...outcome, widths: THUMBNAIL_WIDTHS } : outcome);
    return outcome;
  })().finally(() => underway.delete(url));
  underway.set(url, making);
  return making;
}

/**
 * The thumbnail of the artwork at `url`, `width` px a side: the copy kept while fresh, else fetched, resized
 * and kept. NotFound for an address no feed or item names (castsync fetches no other); when the artwork
 * cannot be had (or too many fetches wait), its own URL for the page to show instead.
 */
export async function thumbnail(ctx: Context, url: string, width: number): Promise<Thumbnail> {
  if (!THUMBNAIL_WIDTHS.includes(width)) throw new InvalidInput(`width must be one of ${THUMBNAIL_WIDTHS.join(', ')}`);
  if (!/^https?:\/\//i.test(url)) throw new NotFound();
  const copy = await repo.kept(ctx.db, url, width);
  if (copy && Date.now() - copy.fetched_at.getTime() < (copy.image ? KEEP_MS.image : KEEP_MS.error))
    return copy.image ? { image: copy.image } : { fallback: url };
  if (!(await repo.known(ctx.db, url))) throw new NotFound();
  let outcome;
  try {
    outcome = await make(ctx, url);
  } catch (err) {
    if (err instanceof Busy) return { fallback: url };
    throw err;
  }
  return 'images' in outcome ? { image: outcome.images.get(width)! } : { fallback: url };
}
