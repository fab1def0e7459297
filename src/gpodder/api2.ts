import { Router, type Request, type RequestHandler } from 'express';
import type { ApiContext } from '../api-context';
import * as auth from '../auth/service';
import * as reports from '../devices/reports';
import * as devices from '../devices/service';
import { currentUser } from '../http/credentials';
import { route } from '../http/method';
import * as favourites from '../episodes/favourites';
import * as subscriptions from '../subscriptions/service';
import { pull, push } from './feeds';
import { setSessionCookie } from './auth';
import { anyJson, baseUrl, parseJsonBody } from './http';
import { changesBody, deviceBody, syncDevicesBody } from './schemas';
import { parseSince } from './sync-time';
import { error, json, jsonBody, type Documenter } from '../http/openapi';
import { authErrors, byDevice, byUser, empty, gpodderPath } from './docs';
import { changesResponse, deviceList, favoriteList, pushResponse, sinceQuery, syncDevicesResponse } from './schemas';

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
  await reports.note(ctx.db, userId, {
    device,
    client: req.headers['user-agent'],
    kind: 'subscriptions',
    sent: { add: add.length, remove: remove.length },
    skipped: [...refused, ...addedAndRemoved.map((item) => ({ item, reason: KEPT }))],
  });
  return done;
}

const KEPT = 'both added and removed: kept subscribed';

/** The gpodder.net API v2: login, devices, subscriptions and device synchronisation. */
export function api2Routes(ctx: ApiContext, user: RequestHandler): Router {
  const r = Router();
  const { db } = ctx;
  route(
    r,
    '/api/2/auth/:user/login.json',
    {
      post: (_req, res) => {
        // The authentication before this gave the client a session cookie if it had no valid one.
        res.status(200).end();
      },
    },
    [user],
  );
  route(
    r,
    '/api/2/auth/:user/logout.json',
    {
      post: async (req, res) => {
        if (res.locals.session) await auth.closeSession(ctx, res.locals.session);
        setSessionCookie(ctx, req, res, '');
        res.status(200).end();
      },
    },
    [user],
  );
  route(
    r,
    '/api/2/favorites/:user.json',
    {
      // As gpodder.net serves them: the episode's title and URL, its podcast's, its release, its page.
      get: async (req, res) => {
        const list = await favourites.list(db, currentUser(req), ctx.config.favouritesMax);
        const base = baseUrl(ctx, req);
        res.json(
          list.map((f) => ({
            title: f.title ?? '',
            url: f.enclosureUrl,
            podcast_title: f.podcastTitle ?? '',
            podcast_url: f.podcastUrl,
            description: '',
            website: f.link ?? '',
            mygpo_link: f.itemId === null ? '' : `${base}/web/episodes/${f.itemId}`,
            released: f.publishedAt === null ? '' : f.publishedAt.toISOString().slice(0, 19),
          })),
        );
      },
    },
    [user],
  );
  route(
    r,
    '/api/2/devices/:user.json',
    {
      get: async (req, res) => {
        const userId = currentUser(req);
        const [list, feeds] = await Promise.all([devices.list(db, userId), subscriptions.subscribedFeeds(db, userId)]);
        res.json(list.map((d) => ({ id: d.id, caption: d.caption, type: d.type, subscriptions: feeds.length })));
      },
    },
    [user],
  );
  route(
    r,
    '/api/2/devices/:user/:device.json',
    {
      post: [
        anyJson,
        async (req, res) => {
          const body = parseJsonBody(deviceBody, req.body);
          await devices.upsert(db, currentUser(req), String(req.params.device), body);
          // mygpoclient checks that the answer is empty.
          res.status(200).end();
        },
      ],
    },
    [user],
  );
  route(
    r,
    '/api/2/subscriptions/:user/:device.json',
    {
      get: async (req, res) => {
        const since = parseSince(req.query.since);
        await devices.seen(db, currentUser(req), String(req.params.device));
        res.json(await pull(db, currentUser(req), since));
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
  // Every device of a user sees the same list: all of them are always synchronised.
  const synchronized = async (userId: number) => ({
    synchronized: [(await devices.list(db, userId)).map((d) => d.id)],
    'not-synchronized': [] as string[],
  });
  route(
    r,
    '/api/2/sync-devices/:user.json',
    {
      get: async (req, res) => {
        res.json(await synchronized(currentUser(req)));
      },
      post: [
        anyJson,
        async (req, res) => {
          parseJsonBody(syncDevicesBody, req.body);
          res.json(await synchronized(currentUser(req)));
        },
      ],
    },
    [user],
  );
  return r;
}

/** The gpodder.net v2 routes of this file, documented beside them. */
export const documentApi2: Documenter = (r) => {
  const path = gpodderPath(r);
  path('post', '/api/2/auth/{user}/login.json', 'Log in: sets the sessionid cookie', {
    request: byUser,
    responses: { 200: empty, ...authErrors },
  });
  path('post', '/api/2/auth/{user}/logout.json', 'Log out: ends the session of the cookie', {
    request: byUser,
    responses: { 200: empty, ...authErrors },
  });
  path('get', '/api/2/favorites/{user}.json', "The user's favourite episodes, as gpodder.net serves them", {
    request: byUser,
    responses: { 200: json(favoriteList, 'Favourite episodes, the newest set first'), ...authErrors },
  });
  path('get', '/api/2/devices/{user}.json', "The user's devices", {
    request: byUser,
    responses: { 200: json(deviceList, 'Devices'), ...authErrors },
  });
  path('post', '/api/2/devices/{user}/{device}.json', 'Create or update a device', {
    request: { ...byDevice, ...jsonBody(deviceBody) },
    responses: { 200: empty, 400: error('Unknown type or bad device id'), ...authErrors },
  });
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
  for (const method of ['get', 'post'] as const) {
    path(method, '/api/2/sync-devices/{user}.json', 'Device synchronisation: every device shares the list', {
      request: method === 'post' ? { ...byUser, ...jsonBody(syncDevicesBody) } : byUser,
      responses: { 200: json(syncDevicesResponse, 'All devices are synchronised'), ...authErrors },
    });
  }
};
