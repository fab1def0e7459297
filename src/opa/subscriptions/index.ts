import { Router, type RequestHandler } from 'express';
import type { ApiContext } from '../../api-context';
import type { Documenter } from '../../http/openapi';
import { collectionRoutes, documentCollection } from './collection';
import { documentRecord, recordRoutes } from './record';

// /v1/subscriptions, a file per path, each registering its routes on the router it is given and documenting
// them beside them.

export function subscriptionRoutes(ctx: ApiContext, user: RequestHandler): Router {
  const r = Router();
  collectionRoutes(r, ctx, user);
  recordRoutes(r, ctx, user);
  return r;
}

export const documentSubscriptions: Documenter = (r) => {
  documentCollection(r);
  documentRecord(r);
};
