import { Router, type RequestHandler } from 'express';
import type { ApiContext } from '../api-context';
import * as feeds from '../feeds/service';
import { currentUser } from '../http/credentials';
import { route } from '../http/method';
import { error, json, type Documenter } from '../http/openapi';
import { iso } from '../timestamps';
import { parsePath } from './validate';
import { z } from '../http/zod';
import * as subscriptions from '../subscriptions/service';
import { authErrors, secured } from './auth';
import { guidParams } from './schemas';

const url = z.string().nullable();
export const feedResponse = z
  .object({
    guid: z.string().openapi({ description: 'The subscription guid asked for' }),
    feed_url: z.string(),
    title: z.string().nullable(),
    description: z.string().nullable(),
    link: url.openapi({ description: "The podcast's web page" }),
    artwork_url: url,
    author: z.string().nullable(),
    language: z.string().nullable(),
    podcast_guid: z.string().nullable().openapi({ description: 'The podcast:guid the feed declares' }),
    last_fetch: z
      .string()
      .nullable()
      .openapi({
        format: 'date-time',
        description:
          'The last fetch that gave or confirmed the feed; null: not fetched since the subscription last changed ' +
          '(subscribed, subscribed again or moved to this URL), and every other field but feed_url null with it',
      }),
  })
  .openapi('Feed');

/**
 * GET /v1/feeds/{guid}: what the feed fetcher learnt of a subscription's feed, by a fetch since the record's
 * last subscription change. A feed not fetched since (or with fetching turned off) answers with its URL and
 * nulls.
 */
export function feedRoutes(ctx: ApiContext, user: RequestHandler): Router {
  const r = Router();
  route(
    r,
    '/feeds/:guid',
    {
      get: async (req, res) => {
        const { guid } = parsePath(guidParams, req.params);
        const record = await subscriptions.getRecord(ctx.db, currentUser(req), guid);
        const info = (await feeds.describe(ctx.db, currentUser(req), [record.feedUrl])).get(record.feedUrl);
        res.json({
          guid,
          feed_url: record.feedUrl,
          title: info?.title ?? null,
          description: info?.description ?? null,
          link: info?.link ?? null,
          artwork_url: info?.artworkUrl ?? null,
          author: info?.author ?? null,
          language: info?.language ?? null,
          podcast_guid: info?.podcastGuid ?? null,
          last_fetch: info?.lastFetch ? iso(info.lastFetch) : null,
        } satisfies z.infer<typeof feedResponse>);
      },
    },
    [user],
  );
  return r;
}

export const documentFeeds: Documenter = (r) => {
  r.registerPath({
    method: 'get',
    path: '/v1/feeds/{guid}',
    summary: "What is known of a subscription's feed (title, artwork, declared guid), read-only",
    security: secured,
    request: { params: guidParams },
    responses: {
      200: json(feedResponse, 'The feed'),
      ...authErrors,
      404: error('Not found'),
      405: error('Not a UUID'),
      410: error('Deleted'),
    },
  });
};
