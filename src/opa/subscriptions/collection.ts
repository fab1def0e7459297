import type { Router, RequestHandler } from 'express';
import type { ApiContext } from '../../api-context';
import { currentUser } from '../../http/credentials';
import { route } from '../../http/method';
import { error, json, jsonBody, type Documenter } from '../../http/openapi';
import * as subscriptions from '../../subscriptions/service';
import { iso } from '../../timestamps';
import { authErrors, secured } from '../auth';
import { PayloadTooLarge } from '../errors';
import { pageOf, pagedResponses } from '../paging';
import { presentOutcomes, presentRecord } from '../present';
import { MAX_ITEMS, listQuery, listResponse, postBody, postResponse } from '../schemas';
import { parseBody, parseQuery } from '../validate';

/** The user's subscriptions: the records changed since a time, paged, and subscribing to feeds. */
export function collectionRoutes(r: Router, ctx: ApiContext, user: RequestHandler): void {
  route(
    r,
    '/subscriptions',
    {
      get: async (req, res) => {
        const q = parseQuery(listQuery, req.query);
        const { lastChange, total, records } = await subscriptions.listChanges(ctx.db, currentUser(req), {
          since: q.since,
          page: q.page,
          perPage: q.per_page,
        });
        res.set('Sync-Timestamp', iso(lastChange));
        res.json({ ...pageOf(ctx, req, '/v1/subscriptions', q, total), subscriptions: records.map(presentRecord) });
      },
      post: async (req, res) => {
        const body = parseBody(postBody, req.body);
        if (body.subscriptions.length > MAX_ITEMS) {
          throw new PayloadTooLarge(`At most ${MAX_ITEMS} subscriptions in one request`);
        }
        const feeds = body.subscriptions.map((s) => ({ url: s.feed_url, guid: s.guid }));
        const { changedAt, outcomes } = await subscriptions.subscribe(ctx.db, currentUser(req), feeds);
        res.json(presentOutcomes(changedAt, outcomes));
      },
    },
    [user],
  );
}

export const documentCollection: Documenter = (r) => {
  r.registerPath({
    method: 'get',
    path: '/v1/subscriptions',
    summary: 'Records changed since a time, paged',
    security: secured,
    request: { query: listQuery },
    responses: pagedResponses(listResponse, 'A page of records'),
  });
  r.registerPath({
    method: 'post',
    path: '/v1/subscriptions',
    summary: 'Subscribe to feeds',
    security: secured,
    request: jsonBody(postBody),
    responses: {
      200: json(postResponse, 'One success or failure entry per feed, in request order'),
      ...authErrors,
      405: error('Body could not be validated'),
      413: error('Body over 1 MiB or more than 1,000 feeds'),
      415: error('Body is not JSON'),
    },
  });
};
