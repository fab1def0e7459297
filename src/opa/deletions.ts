import { Router, type RequestHandler } from 'express';
import type { ApiContext } from '../api-context';
import { deletionStatus } from '../deletions/service';
import { currentUser } from '../http/credentials';
import { route } from '../http/method';
import { error, json, type Documenter } from '../http/openapi';
import { NotFound } from './errors';
import { parsePath } from './validate';
import { authErrors, secured } from './auth';
import { deletionParams, deletionStatusResponse } from './schemas';

export function deletionRoutes(ctx: ApiContext, user: RequestHandler): Router {
  const r = Router();
  route(
    r,
    '/deletions/:id',
    {
      get: async (req, res) => {
        const { id } = parsePath(deletionParams, req.params);
        if (id === undefined) throw new NotFound();
        const d = await deletionStatus(ctx.db, currentUser(req), id);
        res.json({ deletion_id: d.id, status: d.status, message: d.message });
      },
    },
    [user],
  );
  return r;
}

export const documentDeletions: Documenter = (r) => {
  r.registerPath({
    method: 'get',
    path: '/v1/deletions/{id}',
    summary: 'The status of a deletion request',
    security: secured,
    request: { params: deletionParams },
    responses: { 200: json(deletionStatusResponse, 'Status'), ...authErrors, 404: error('Not found') },
  });
};
