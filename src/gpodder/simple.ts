import { Router, type RequestHandler } from 'express';
import type { ApiContext } from '../api-context';
import type { Db } from '../db/pool';
import * as devices from '../devices/service';
import { currentUser } from '../http/credentials';
import { route } from '../http/method';
import { opmlOf, parseOpml } from '../opml/service';
import * as subscriptions from '../subscriptions/service';
import { addAll, MAX_URLS } from './feeds';
import { BadRequest, NotFound } from './errors';
import { anyText } from './http';
import { error, type Documenter } from '../http/openapi';
import { z } from '../http/zod';
import {
  authErrors,
  device as deviceParam,
  empty,
  format as formatParam,
  gpodderPath,
  text,
  user as userParam,
} from './docs';

type Format = 'opml' | 'json' | 'txt';
const FORMATS: readonly string[] = ['opml', 'json', 'txt'];

function format(raw: unknown): Format {
  if (typeof raw !== 'string' || !FORMATS.includes(raw)) throw new NotFound();
  return raw as Format;
}

/** The user's feeds in the asked format: OPML, a JSON array of URLs, or one URL a line. */
export async function renderFeeds(
  db: Db,
  userId: number,
  fmt: Format,
  title: string,
  urls: string[],
): Promise<{ type: string; body: string }> {
  if (fmt === 'json') return { type: 'application/json; charset=utf-8', body: JSON.stringify(urls) };
  if (fmt === 'txt') return { type: 'text/plain; charset=utf-8', body: urls.map((u) => `${u}\n`).join('') };
  return { type: 'text/x-opml; charset=utf-8', body: await opmlOf(db, userId, title, urls) };
}

/** The URLs of an upload in the named format; a body that does not parse as that format is a 400. */
function uploadedUrls(fmt: Format, body: unknown): string[] {
  const text = typeof body === 'string' ? body : '';
  let urls: string[];
  if (fmt === 'txt') {
    urls = text
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
  } else if (fmt === 'json') {
    let parsed: unknown;
    try {
      parsed = text.trim() === '' ? [] : JSON.parse(text);
    } catch {
      throw new BadRequest('The body is not a JSON array of URLs');
    }
    if (!Array.isArray(parsed) || parsed.some((u) => typeof u !== 'string')) {
      throw new BadRequest('The body is not a JSON array of URLs');
    }
    urls = parsed as string[];
  } else {
    urls = parseOpml(text).map((f) => f.url);
  }
  if (urls.length > MAX_URLS) throw new BadRequest(`At most ${MAX_URLS} feeds in one upload`);
  return urls;
}

/**
 * gpodder.net's simple API. The list is the user's, whatever the device: GET returns the subscribed
 * feeds, and PUT adds every feed it lists but never removes what it leaves out, so that one device's
 * upload cannot wipe the list the other devices share.
 */
export function simpleRoutes(ctx: ApiContext, user: RequestHandler): Router {
  const r = Router();
  const get: RequestHandler = async (req, res) => {
    const fmt = format(req.params.format);
    if (req.params.device !== undefined) await devices.seen(ctx.db, currentUser(req), String(req.params.device));
    const urls = await subscriptions.subscribedFeeds(ctx.db, currentUser(req));
    const out = await renderFeeds(ctx.db, currentUser(req), fmt, `Subscriptions of ${String(req.params.user)}`, urls);
    res.type(out.type).send(out.body);
  };
  route(r, '/subscriptions/:user.:format', { get }, [user]);
  route(
    r,
    '/subscriptions/:user/:device.:format',
    {
      get,
      put: [
        anyText,
        async (req, res) => {
          const urls = uploadedUrls(format(req.params.format), req.body);
          await devices.seen(ctx.db, currentUser(req), String(req.params.device));
          await addAll(ctx.db, currentUser(req), urls);
          res.status(200).end();
        },
      ],
    },
    [user],
  );
  return r;
}

/** The simple API's routes, documented beside them. */
export const documentSimple: Documenter = (r) => {
  const path = gpodderPath(r);
  path('get', '/subscriptions/{user}.{format}', "The user's subscribed feeds (simple API)", {
    request: { params: z.object({ user: userParam, format: formatParam }) },
    responses: {
      200: text('OPML, a JSON array of URLs, or one URL a line'),
      404: error('Unknown format'),
      ...authErrors,
    },
  });
  path('get', '/subscriptions/{user}/{device}.{format}', "The user's subscribed feeds (simple API)", {
    request: { params: z.object({ user: userParam, device: deviceParam, format: formatParam }) },
    responses: {
      200: text('OPML, a JSON array of URLs, or one URL a line'),
      404: error('Unknown format'),
      ...authErrors,
    },
  });
  path('put', '/subscriptions/{user}/{device}.{format}', 'Add every listed feed; never removes (simple API)', {
    request: {
      params: z.object({ user: userParam, device: deviceParam, format: formatParam }),
      body: { content: { 'text/plain': { schema: z.string() } } },
    },
    responses: { 200: empty, 400: error('The body is not in the named format'), ...authErrors },
  });
};
