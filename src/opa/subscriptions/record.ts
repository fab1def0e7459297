import type { Router, RequestHandler } from 'express';
import type { ApiContext } from '../../api-context';
import * as deletions from '../../deletions/service';
import { currentUser } from '../../http/credentials';
import { route } from '../../http/method';
import { error, json, jsonBody, type Documenter } from '../../http/openapi';
import * as subscriptions from '../../subscriptions/service';
import { authErrors, secured } from '../auth';
import { presentChange, presentRecord } from '../present';
import { deletionAccepted, guidParams, patchBody, patchResponse, subscriptionRecord } from '../schemas';
import { parseBody, parsePath } from '../validate';

/** One subscription record, by any guid of its chain: read, changed, deleted. */
export function recordRoutes(r: Router, ctx: ApiContext, user: RequestHandler): void {
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
}

export const documentRecord: Documenter = (r) => {
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
