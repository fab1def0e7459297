import { Router, type RequestHandler } from 'express';
import type { ApiContext } from '../api-context';
import * as auth from '../auth/service';
import * as devices from '../devices/service';
import { currentUser } from '../http/credentials';
import { BadRequest } from './errors';
import { route } from '../http/method';
import * as subscriptions from '../subscriptions/service';
import { pull, push } from './feeds';
import { anyJson, parseJsonBody } from './http';
import { changesBody, deviceBody, syncDevicesBody } from './schemas';
import { parseSince } from './sync-time';

/** An upload's changes: a URL both added and removed is a 400. */
export function checkChanges<T extends { add: string[]; remove: string[] }>(b: T): T {
  const removed = new Set(b.remove);
  const both = b.add.find((u) => removed.has(u));
  if (both !== undefined) throw new BadRequest(`A URL is both added and removed: ${both}`);
  return b;
}

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
      post: async (_req, res) => {
        if (res.locals.session) await auth.closeSession(ctx, res.locals.session);
        res.append('Set-Cookie', 'sessionid=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0');
        res.status(200).end();
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
          const body = checkChanges(parseJsonBody(changesBody, req.body));
          await devices.seen(db, currentUser(req), String(req.params.device));
          const done = await push(db, currentUser(req), body.add, body.remove);
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
