import { Router, type RequestHandler } from 'express';
import type { ApiContext } from '../api-context';
import * as auth from '../auth/service';
import { currentUser } from '../http/credentials';
import { NotFound } from './errors';
import { route } from '../http/method';
import { error, json, type Documenter } from '../http/openapi';
import { parsePath } from './validate';
import { z } from '../http/zod';
import { authErrors, secured } from './auth';
import { idInPath } from './schemas';

export const sessionList = z
  .array(
    z.object({
      id: z.number().int(),
      kind: z
        .enum(['gpodder', 'login', 'browser'])
        .openapi({ description: 'a gpodder sessionid cookie, a /v1 login, or a sign-in on the web page' }),
      label: z.string().optional().openapi({ description: "The client's User-Agent when it was opened" }),
      created: z.string().openapi({ format: 'date-time' }),
      expires: z.string().optional().openapi({ format: 'date-time' }),
    }),
  )
  .openapi('Sessions');
const sessionParams = z.object({ id: idInPath('session', '7') });

/** The user's sessions: listed, and revoked one by one. */
export function sessionRoutes(ctx: ApiContext, user: RequestHandler): Router {
  const r = Router();
  route(
    r,
    '/auth/sessions',
    {
      get: async (req, res) => {
        const list = await auth.listSessions(ctx.db, currentUser(req));
        res.json(
          list.map((s) => ({
            id: s.id,
            kind: s.kind,
            ...(s.label !== null && { label: s.label }),
            created: s.createdAt.toISOString(),
            ...(s.expiresAt && { expires: s.expiresAt.toISOString() }),
          })),
        );
      },
    },
    [user],
  );
  route(
    r,
    '/auth/sessions/:id',
    {
      delete: async (req, res) => {
        const { id } = parsePath(sessionParams, req.params);
        if (id === undefined || !(await auth.revokeSession(ctx, currentUser(req), id))) throw new NotFound();
        res.status(204).end();
      },
    },
    [user],
  );
  return r;
}

export const documentSessions: Documenter = (r) => {
  r.registerPath({
    method: 'get',
    path: '/v1/auth/sessions',
    summary: "The user's sessions: gpodder cookies and /v1 logins",
    security: secured,
    responses: { 200: json(sessionList, 'Newest first'), ...authErrors },
  });
  r.registerPath({
    method: 'delete',
    path: '/v1/auth/sessions/{id}',
    summary: 'Revoke a session',
    security: secured,
    request: { params: sessionParams },
    responses: { 204: { description: 'Revoked' }, ...authErrors, 404: error('No such session of the user') },
  });
};
