import type { Request } from 'express';
import type { ApiContext } from '../api-context';
import { error, json } from '../http/openapi';
import type { z } from '../http/zod';
import { authErrors } from './auth';
import type { ListQuery } from './schemas';

/** Absolute link to another page, keeping since and per_page; PUBLIC_URL wins over the request's host. */
function pageLink(ctx: ApiContext, req: Request, path: string, q: ListQuery, page: number): string {
  const base = ctx.config.publicUrl ?? `${req.protocol}://${req.host}`;
  const params = new URLSearchParams();
  if (q.since) params.set('since', q.since.toISOString());
  params.set('page', String(page));
  params.set('per_page', String(q.per_page));
  return `${base}${path}?${params.toString()}`;
}

/** The envelope of page q.page of `total` items listed at `path`. */
export function pageOf(ctx: ApiContext, req: Request, path: string, q: ListQuery, total: number) {
  const pages = Math.ceil(total / q.per_page);
  return {
    total,
    page: q.page,
    per_page: q.per_page,
    ...(q.page < pages && { next: pageLink(ctx, req, path, q, q.page + 1) }),
    ...(q.page > 1 && q.page - 1 <= pages && { previous: pageLink(ctx, req, path, q, q.page - 1) }),
  };
}

/** The documented answers of a paged GET: the page with its Sync-Timestamp, a bad parameter, auth errors. */
export const pagedResponses = (page: z.ZodType, description: string) => ({
  200: {
    ...json(page, description),
    headers: {
      'Sync-Timestamp': {
        description: 'Send this as the next `since` to receive every later change',
        schema: { type: 'string' as const, format: 'date-time' },
      },
    },
  },
  400: error('Bad query parameter'),
  ...authErrors,
});
