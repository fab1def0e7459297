import { Router, type RequestHandler } from 'express';
import type { ApiContext } from '../api-context';
import * as deletions from '../deletions/service';
import { currentUser } from '../http/credentials';
import { PayloadTooLarge } from './errors';
import { route } from '../http/method';
import { error, json, jsonBody, type Documenter } from '../http/openapi';
import { iso } from '../timestamps';
import { parseBody, parsePath, parseQuery } from './validate';
import * as subscriptions from '../subscriptions/service';
import { authErrors, secured } from './auth';
import { pageOf, pagedResponses } from './paging';
import { presentChange, presentOutcomes, presentRecord } from './present';
import {
  MAX_ITEMS,
  deletionAccepted,
  guidParams,
  listQuery,
  listResponse,
  patchBody,
  patchResponse,
  postBody,
  postResponse,
  subscriptionRecord,
} from './schemas';

export function subscriptionRoutes(ctx: ApiContext, user: RequestHandler): Router {
  const r = Router();
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
  route(
    r,
    '/subscriptions/:guid',
    {
      get: async (req, res) => {
        const { guid } = parsePath(guidParams, req.params);
        res.json(presentRecord(await subscriptions.getRecord(ctx.db, currentUser(req), guid)));
      },
      patch: async (req, res) => {
        const { guid } = parsePath(guidParams, req.params);
        const body = parseBody(patchBody, req.body);
        const change = { feedUrl: body.new_feed_url, guid: body.new_guid, subscribed: body.is_subscribed };
        res.json(presentChange(await subscriptions.change(ctx.db, currentUser(req), guid, change)));
      },
      delete: async (req, res) => {
        const { guid } = parsePath(guidParams, req.params);
        const d = await deletions.requestDeletion(ctx.db, currentUser(req), guid);
        res.status(202).json({ deletion_id: d.id, message: d.message });
      },
    },
    [user],
  );
  return r;
}

export const documentSubscriptions: Documenter = (r) => {
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
  const byGuid = { params: guidParams };
  r.registerPath({
    method: 'get',
    path: '/v1/subscriptions/{guid}',
    summary: 'One record, by any guid of its chain',
    security: secured,
    request: byGuid,
    responses: {
      200: json(subscriptionRecord, 'The record'),
      ...authErrors,
      404: error('Not found'),
      405: error('Not a UUID'),
      410: error('Deleted'),
    },
  });
  r.registerPath({
    method: 'patch',
    path: '/v1/subscriptions/{guid}',
    summary: 'Change the feed URL, guid or subscription state',
    security: secured,
    request: { ...byGuid, ...jsonBody(patchBody) },
    responses: {
      200: json(patchResponse, 'Only the fields that changed'),
      ...authErrors,
      404: error('Not found'),
      405: error('Body could not be validated'),
      410: error('Deleted'),
    },
  });
  r.registerPath({
    method: 'delete',
    path: '/v1/subscriptions/{guid}',
    summary: 'Delete a subscription (processed in the background)',
    security: secured,
    request: byGuid,
    responses: {
      202: json(deletionAccepted, 'Accepted'),
      ...authErrors,
      404: error('Not found'),
      405: error('Not a UUID'),
      410: error('Already deleted'),
    },
  });
};
