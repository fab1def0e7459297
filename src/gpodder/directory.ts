import { Router, type Request } from 'express';
import type { ApiContext } from '../api-context';
import * as directory from '../directory/service';
import { MAX_TOPLIST, type Popular, toplist } from '../directory/service';
import { HttpError } from '../http/errors';
import { route } from '../http/method';
import { error, type Documenter } from '../http/openapi';
import { z } from '../http/zod';
import { buildOpml, escapeXml } from '../opml/service';
import { BadRequest, NotFound } from './errors';
import { noStore } from './http';
import { searchLimit } from './address-limits';

// gpodder.net's public directory calls, as mygpo serves them (mygpo/api/simple.py): `/search.{format}?q=`
// answered from the configured podcast directory, and `/toplist/{n}.{format}` from this server's own users'
// subscriptions, counting only feeds with at least TOPLIST_MIN_SUBSCRIBERS subscribers (docs/directory.md).
// No credentials, as on gpodder.net.

type Format = 'json' | 'txt' | 'opml' | 'xml';
const FORMATS: readonly string[] = ['json', 'txt', 'opml', 'xml'];

function format(raw: unknown): Format {
  if (typeof raw !== 'string' || !FORMATS.includes(raw)) throw new BadRequest('Invalid format');
  return raw as Format;
}

/** A podcast in gpodder.net's shape (mygpo's podcast_data; mygpoclient also requires subscribers_last_week). */
type GpodderPodcast = {
  url: string;
  title: string;
  author: string;
  description: string;
  subscribers: number;
  subscribers_last_week: number;
  logo_url: string | null;
  scaled_logo_url: string | null;
  website: string | null;
  mygpo_link: string;
};

const origin = (ctx: ApiContext, req: Request) => ctx.config.publicUrl ?? `${req.protocol}://${req.host}`;

function gpodderPodcast(ctx: ApiContext, req: Request, p: directory.Found | Popular): GpodderPodcast {
  const subscribers = 'subscribers' in p ? p.subscribers : 0;
  return {
    url: p.feedUrl,
    title: p.title ?? '',
    author: p.author ?? '',
    description: p.description ?? '',
    subscribers,
    subscribers_last_week: subscribers,
    logo_url: p.artworkUrl,
    scaled_logo_url: p.artworkUrl,
    website: p.website,
    // The web page's preview of the feed, where a person can subscribe.
    mygpo_link: `${origin(ctx, req)}/web/search/preview?${new URLSearchParams({ url: p.feedUrl })}`,
  };
}

/** The list in the asked format: a JSON array, one URL a line, OPML, or mygpo's podcasts XML. */
function rendered(fmt: Format, title: string, podcasts: GpodderPodcast[]): { type: string; body: string } {
  if (fmt === 'json') return { type: 'application/json; charset=utf-8', body: JSON.stringify(podcasts) };
  if (fmt === 'txt') return { type: 'text/plain; charset=utf-8', body: podcasts.map((p) => `${p.url}\n`).join('') };
  if (fmt === 'opml') {
    const feeds = podcasts.map((p) => ({ url: p.url, title: p.title || undefined, htmlUrl: p.website ?? undefined }));
    return { type: 'text/xml; charset=utf-8', body: buildOpml(title, feeds) };
  }
  const field = (name: string, value: string | number | null) =>
    `  <${name}>${escapeXml(String(value ?? ''))}</${name}>`;
  const items = podcasts.map((p) =>
    [' <podcast>', ...Object.entries(p).map(([k, v]) => field(k, v)), ' </podcast>'].join('\n'),
  );
  return { type: 'application/xml; charset=utf-8', body: ['<podcasts>', ...items, '</podcasts>', ''].join('\n') };
}

export function directoryRoutes(ctx: ApiContext): Router {
  const r = Router();
  const settings = directory.directorySettings(ctx.config);
  const popular = toplist(ctx.config.toplistMinSubscribers);

  const limit = searchLimit();
  route(r, '/search.:format', {
    get: [
      noStore,
      limit,
      async (req, res) => {
        const fmt = format(req.params.format);
        const q = typeof req.query.q === 'string' ? req.query.q.trim().slice(0, 200) : '';
        if (q === '') throw new BadRequest('/search.opml|txt|json|xml?q={query}');
        // No directory configured: nothing found, as a search that found nothing.
        const outcome = settings.provider
          ? await directory.search(settings, ctx.logger, q)
          : { ok: true as const, found: [] };
        if (!outcome.ok) throw new HttpError(502, outcome.message);
        const out = rendered(
          fmt,
          'castsync - Search',
          outcome.found.map((p) => gpodderPodcast(ctx, req, p)),
        );
        res.type(out.type).send(out.body);
      },
    ],
  });
  const top = (count: number, fmt: Format, req: Request) =>
    popular(ctx.db, count).then((list) =>
      rendered(
        fmt,
        `castsync - Top ${list.length}`,
        list.map((p) => gpodderPodcast(ctx, req, p)),
      ),
    );
  route(r, '/toplist/:count.:format', {
    get: [
      noStore,
      async (req, res) => {
        const count = String(req.params.count);
        if (!/^\d+$/.test(count)) throw new NotFound();
        // As gpodder.net: 1 to 100; more is 100, however many digits (Number gives Infinity at worst).
        const out = await top(Math.max(1, Math.min(MAX_TOPLIST, Number(count))), format(req.params.format), req);
        res.type(out.type).send(out.body);
      },
    ],
  });
  route(r, '/toplist.:format', {
    get: [
      noStore,
      async (req, res) => {
        const out = await top(50, format(req.params.format), req);
        res.type(out.type).send(out.body);
      },
    ],
  });
  return r;
}

const gpodderPodcastSchema = z
  .object({
    url: z.string(),
    title: z.string(),
    author: z.string(),
    description: z.string(),
    subscribers: z.number().int(),
    subscribers_last_week: z.number().int(),
    logo_url: z.string().nullable(),
    scaled_logo_url: z.string().nullable(),
    website: z.string().nullable(),
    mygpo_link: z.string().openapi({ description: "The feed's preview on this server's web page" }),
  })
  .openapi('GpodderPodcast');

export const documentDirectory: Documenter = (r) => {
  const formatParam = z.string().openapi({ description: 'json, opml, xml or txt', example: 'json' });
  const lists = {
    200: {
      description: 'Podcasts as a JSON array, OPML, podcasts XML, or one URL a line',
      content: { 'application/json': { schema: z.array(gpodderPodcastSchema) } },
    },
    400: error('Unknown format'),
  };
  const path = (p: string, summary: string, request: Record<string, z.ZodObject>, extra = {}) =>
    r.registerPath({
      method: 'get',
      path: p,
      summary,
      tags: ['gpodder.net directory'],
      request,
      responses: { ...lists, ...extra },
    });
  path(
    '/search.{format}',
    'Search the podcast directory (no credentials)',
    { params: z.object({ format: formatParam }), query: z.object({ q: z.string() }) },
    {
      429: error('Too many searches from this address in a minute'),
      502: error('The directory failed; the message says how'),
    },
  );
  path('/toplist/{count}.{format}', "This server's most subscribed feeds, each with at least TOPLIST_MIN_SUBSCRIBERS", {
    params: z.object({ count: z.string().openapi({ description: '1 to 100', example: '50' }), format: formatParam }),
  });
  path('/toplist.{format}', "This server's 50 most subscribed feeds", { params: z.object({ format: formatParam }) });
};
