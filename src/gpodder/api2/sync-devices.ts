import type { Router, RequestHandler } from 'express';
import type { ApiContext } from '../../api-context';
import * as devices from '../../devices/service';
import { currentUser } from '../../http/credentials';
import { route } from '../../http/method';
import { json, jsonBody, type Documenter } from '../../http/openapi';
import { authErrors, byUser, gpodderPath } from '../docs';
import { anyJson, parseJsonBody } from '../http';
import { syncDevicesBody, syncDevicesResponse } from '../schemas';

/** Device synchronisation, read and asked for. */
export function syncDeviceRoutes(r: Router, ctx: ApiContext, user: RequestHandler): void {
  // Every device of a user sees the same list: all of them are always synchronised.
  const synchronized = async (userId: number) => ({
    synchronized: [(await devices.list(ctx.db, userId)).map((d) => d.id)],
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
}

export const documentSyncDevices: Documenter = (r) => {
  const path = gpodderPath(r);
  for (const method of ['get', 'post'] as const) {
    path(method, '/api/2/sync-devices/{user}.json', 'Device synchronisation: every device shares the list', {
      request: method === 'post' ? { ...byUser, ...jsonBody(syncDevicesBody) } : byUser,
      responses: { 200: json(syncDevicesResponse, 'All devices are synchronised'), ...authErrors },
    });
  }
};
