import type { Request, RequestHandler, Router } from 'express';
import type { ApiContext } from '../../api-context';
import * as devices from '../../devices/service';
import { currentUser } from '../../http/credentials';
import { route } from '../../http/method';
import { error, json, jsonBody, type Documenter } from '../../http/openapi';
import { authErrors, byDevice, gpodderPath } from '../docs';
import { pull, push } from '../feeds';
import { anyJson, parseJsonBody } from '../http';
import { changesBody, changesResponse, pushResponse, sinceQuery } from '../schemas';
import { parseSince } from '../sync-time';

/**
 * A subscription upload of the gpodder.net or the Nextcloud route: one change, a 400 only for a body that
 * is not `{add, remove}` lists of strings. What was skipped or kept is logged, and noted for the device's
 * health on the web page, so that a person can see why an app's list differs.
 */
export async function uploadChanges(ctx: ApiContext, req: Request, device: string | undefined) {
  const userId = currentUser(req);
  const { add, remove } = parseJsonBody(changesBody, req.body);
  // Only once the body is read: a refused upload leaves everything as it was, the device too.
  if (device !== undefined) await devices.seen(ctx.db, userId, device);
  const done = await push(ctx.db, userId, add, remove);
  const { refused, addedAndRemoved } = done;
  const log = { component: 'gpodder', userId, device };
  if (addedAndRemoved.length > 0) {
    ctx.logger.warn(
      { ...log, urls: addedAndRemoved.slice(0, 20), count: addedAndRemoved.length },
      'subscription upload: URLs both added and removed were kept subscribed',
    );
  }
  if (refused.length > 0) {
    ctx.logger.warn(
      { ...log, skipped: refused.slice(0, 20), count: refused.length },
      'subscription upload: URLs refused by the URL rules were skipped',
    );
  }
  await devices.noteReport(ctx.db, userId, {
    device,
    client: req.headers['user-agent'],
    kind: 'subscriptions',
    sent: { add: add.length, remove: remove.length },
    skipped: [...refused, ...addedAndRemoved.map((item) => ({ item, reason: KEPT }))],
  });
  return done;
}

const KEPT = 'both added and removed: kept subscribed';

/** A device's subscription changes: read since a time, and uploaded. */
export function subscriptionRoutes(r: Router, ctx: ApiContext, user: RequestHandler): void {
  route(
    r,
    '/api/2/subscriptions/:user/:device.json',
    {
      get: async (req, res) => {
        const since = parseSince(req.query.since);
        await devices.seen(ctx.db, currentUser(req), String(req.params.device));
        res.json(await pull(ctx.db, currentUser(req), since));
      },
      post: [
        anyJson,
        async (req, res) => {
          const done = await uploadChanges(ctx, req, String(req.params.device));
          res.json({ timestamp: done.timestamp, update_urls: done.updateUrls });
        },
      ],
    },
    [user],
  );
}

export const documentSubscriptions: Documenter = (r) => {
  const path = gpodderPath(r);
  path('get', '/api/2/subscriptions/{user}/{device}.json', 'Subscription changes since a time', {
    request: { ...byDevice, query: sinceQuery },
    responses: {
      200: json(changesResponse, 'Added and removed feeds, and the next since'),
      400: error('Bad since'),
      ...authErrors,
    },
  });
  path('post', '/api/2/subscriptions/{user}/{device}.json', 'Upload subscription changes (one change; per URL)', {
    description:
      'Applied as one change. A URL refused by the URL rules is skipped and named as [sent, ""] in update_urls; ' +
      'a URL in both lists stays subscribed (docs/clients.md).',
    request: { ...byDevice, ...jsonBody(changesBody) },
    responses: {
      200: json(pushResponse, 'The timestamp, and URLs rewritten or refused'),
      400: error('A body that is not {add, remove} lists of strings'),
      ...authErrors,
    },
  });
};
