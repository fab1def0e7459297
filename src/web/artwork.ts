import crypto from 'node:crypto';
import { Router } from 'express';
import * as feeds from '../feeds/service';
import type { ApiContext } from '../api-context';
import { NotFound } from '../errors';
import { notModified } from '../http/entity-tags';
import { route } from '../http/method';

// Artwork thumbnails: small WebP copies of the artwork the pages show, made and kept by castsync
// (feeds/artwork.ts), so that a phone loads 16 kB rather than the feed's 1400–3000 px original.

/**
 * A thumbnail is the same for everyone and changes rarely (its URL names the artwork): a week, in any cache,
 * unless the answer signs the browser in (a trusted proxy's first request), which no shared cache may keep.
 */
const KEEP = { public: 'public, max-age=604800', private: 'private, max-age=604800' };

/** A thumbnail's address on castsync. */
const thumbnailUrl = (url: string, width: number) => `/web/artwork?u=${encodeURIComponent(url)}&w=${width}`;

/**
 * What an <img> shows of the artwork at `url`, `size` px a side: the thumbnail of that width and, for a
 * screen of 2 pixels to the point, the one twice as wide. Null for no artwork, or an address that is not
 * http(s) (the page shows its blank square).
 */
export function artworkImage(url: string | null | undefined, size: number): { src: string; srcset: string } | null {
  if (!url || !/^https?:\/\//i.test(url)) return null;
  const src = thumbnailUrl(url, size);
  return { src, srcset: `${src} 1x, ${thumbnailUrl(url, size * 2)} 2x` };
}

/**
 * `GET /web/artwork?u=<artwork URL>&w=<width>`: the thumbnail as WebP, with an ETag; a 404 for an address
 * no feed or item names; a redirect to the artwork itself when it could not be had, so that the page shows
 * it as it did before castsync made thumbnails.
 */
export function artworkRoutes(ctx: ApiContext): Router {
  const r = Router();
  route(r, '/web/artwork', {
    get: async (req, res) => {
      const url = typeof req.query.u === 'string' ? req.query.u : '';
      const got = await feeds.thumbnail(ctx, url, Number(req.query.w));
      if ('fallback' in got) {
        // For an image only: a link someone sends (a navigation) would otherwise take a signed-in person
        // to whatever address a feed anyone can add names as its artwork (an open redirect).
        if (req.get('sec-fetch-mode') === 'navigate') throw new NotFound();
        res.set('Cache-Control', 'no-cache').redirect(302, got.fallback);
        return;
      }
      const etag = `"${crypto.createHash('sha256').update(got.image).digest('base64url').slice(0, 22)}"`;
      res.set({ 'Cache-Control': res.hasHeader('set-cookie') ? KEEP.private : KEEP.public, ETag: etag });
      if (notModified(req, etag)) {
        res.status(304).end();
        return;
      }
      res.type('image/webp').send(got.image);
    },
  });
  return r;
}
