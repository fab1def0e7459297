import { Router, type Request } from 'express';
import { currentUser } from '../auth/middleware';
import type { Context } from '../context';
import * as deletions from '../deletions/service';
import { PayloadTooLarge, ValidationFailed } from '../http/errors';
import { route } from '../http/method';
import { parseBody } from '../http/validate';
import { parseListQuery, type ListQuery } from './list-query';
import { MAX_ITEMS, patchBody, postBody } from './schemas';
import * as service from './service';
import { parseGuid } from './urls';

/** The guid in the path; not a UUID is the contract's 405. */
export function pathGuid(req: Request): string {
  const guid = parseGuid(String(req.params.guid));
  if (!guid) throw new ValidationFailed('the guid in the path is not a UUID');
  return guid;
}

/** Absolute link to another page, keeping since and per_page; PUBLIC_URL wins over the request's host. */
function pageLink(ctx: Context, req: Request, q: ListQuery, page: number): string {
  const base = ctx.config.publicUrl ?? `${req.protocol}://${req.host}`;
  const params = new URLSearchParams();
  if (q.since) params.set('since', q.since.toISOString());
  params.set('page', String(page));
  params.set('per_page', String(q.perPage));
  return `${base}/v1/subscriptions?${params.toString()}`;
}

export function subscriptionRoutes(ctx: Context): Router {
  const r = Router();
  route(r, '/subscriptions', {
    get: async (req, res) => {
      const q = parseListQuery(req.query as Record<string, unknown>);
      const { syncTimestamp, total, records } = await service.list(ctx, currentUser(req), q);
      const pages = Math.ceil(total / q.perPage);
      res.set('Sync-Timestamp', syncTimestamp);
      res.json({
        total,
        page: q.page,
        per_page: q.perPage,
        ...(q.page < pages && { next: pageLink(ctx, req, q, q.page + 1) }),
        ...(q.page > 1 && q.page - 1 <= pages && { previous: pageLink(ctx, req, q, q.page - 1) }),
        subscriptions: records,
      });
    },
    post: async (req, res) => {
      const body = parseBody(postBody, req.body);
      if (body.subscriptions.length > MAX_ITEMS) {
        throw new PayloadTooLarge(`At most ${MAX_ITEMS} subscriptions in one request`);
      }
      res.json(await service.subscribe(ctx, currentUser(req), body.subscriptions));
    },
  });
  route(r, '/subscriptions/:guid', {
    get: async (req, res) => {
      res.json(await service.getOne(ctx, currentUser(req), pathGuid(req)));
    },
    patch: async (req, res) => {
      const guid = pathGuid(req);
      res.json(await service.update(ctx, currentUser(req), guid, parseBody(patchBody, req.body)));
    },
    delete: async (req, res) => {
      const deletionId = await deletions.requestDeletion(ctx, currentUser(req), pathGuid(req));
      res.status(202).json({ deletion_id: deletionId, message: deletions.ACCEPTED_MESSAGE });
    },
  });
  return r;
}
