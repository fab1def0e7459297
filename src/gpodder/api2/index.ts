import { Router, type RequestHandler } from 'express';
import type { ApiContext } from '../../api-context';
import type { Documenter } from '../../http/openapi';
import { deviceRoutes, documentDevices } from './devices';
import { documentFavorites, favoriteRoutes } from './favorites';
import { documentLogin, loginRoutes } from './login';
import { documentSubscriptions, subscriptionRoutes } from './subscriptions';
import { documentSyncDevices, syncDeviceRoutes } from './sync-devices';

// The gpodder.net API v2, a file per resource, each registering its routes on the router it is given and
// documenting them beside them.

/** The gpodder.net API v2: login, favourites, devices, subscriptions and device synchronisation. */
export function api2Routes(ctx: ApiContext, user: RequestHandler): Router {
  const r = Router();
  loginRoutes(r, ctx, user);
  favoriteRoutes(r, ctx, user);
  deviceRoutes(r, ctx, user);
  subscriptionRoutes(r, ctx, user);
  syncDeviceRoutes(r, ctx, user);
  return r;
}

/** The gpodder.net v2 routes of this folder, documented beside them. */
export const documentApi2: Documenter = (r) => {
  documentLogin(r);
  documentFavorites(r);
  documentDevices(r);
  documentSubscriptions(r);
  documentSyncDevices(r);
};
