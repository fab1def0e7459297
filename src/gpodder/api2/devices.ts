import type { Router, RequestHandler } from 'express';
import type { ApiContext } from '../../api-context';
import * as devices from '../../devices/service';
import { currentUser } from '../../http/credentials';
import { route } from '../../http/method';
import { error, json, jsonBody, type Documenter } from '../../http/openapi';
import * as subscriptions from '../../subscriptions/service';
import { authErrors, byDevice, byUser, empty, gpodderPath } from '../docs';
import { anyJson, parseJsonBody } from '../http';
import { deviceBody, deviceList } from '../schemas';

/**
 * The device types mygpoclient (the library behind gPodder, which names itself first in its User-Agent)
 * reads: it refuses the whole list when one device is of another type, and mygpo's `tablet` is not among
 * them. To it, a tablet is listed as what it is nearest to, `mobile`; every other client gets the type kept.
 */
const MYGPOCLIENT_TYPES: ReadonlySet<string> = new Set(['desktop', 'laptop', 'mobile', 'server', 'other']);
const typeFor = (userAgent: string | undefined) =>
  userAgent?.startsWith('mygpoclient/') === true
    ? (type: string) => (MYGPOCLIENT_TYPES.has(type) ? type : 'mobile')
    : (type: string) => type;

/** The user's devices: the list, and creating or updating one. */
export function deviceRoutes(r: Router, ctx: ApiContext, user: RequestHandler): void {
  const { db } = ctx;
  route(
    r,
    '/api/2/devices/:user.json',
    {
      get: async (req, res) => {
        const userId = currentUser(req);
        const [list, feeds] = await Promise.all([devices.list(db, userId), subscriptions.subscribedFeeds(db, userId)]);
        const type = typeFor(req.headers['user-agent']);
        res.json(list.map((d) => ({ id: d.id, caption: d.caption, type: type(d.type), subscriptions: feeds.length })));
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
}

export const documentDevices: Documenter = (r) => {
  const path = gpodderPath(r);
  path('get', '/api/2/devices/{user}.json', "The user's devices", {
    request: byUser,
    responses: { 200: json(deviceList, 'Devices'), ...authErrors },
  });
  path('post', '/api/2/devices/{user}/{device}.json', 'Create or update a device', {
    request: { ...byDevice, ...jsonBody(deviceBody) },
    responses: { 200: empty, 400: error('Unknown type or bad device id'), ...authErrors },
  });
};
