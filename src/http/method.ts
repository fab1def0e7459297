import type { RequestHandler, Response, Router } from 'express';
import { MethodNotAllowed } from './errors';

type Handler = RequestHandler | RequestHandler[];
type Handlers = Partial<Record<'get' | 'post' | 'put' | 'patch' | 'delete', Handler>>;

/**
 * Mounts a path's handlers; any other method gets 405 with an Allow header. The route template
 * ("/v1/subscriptions/:guid") is recorded as soon as the path matches, for the request log and the
 * metrics: Express resets req.baseUrl when an error leaves the router, so it cannot be read afterwards.
 * `before` runs ahead of every method's handlers (authentication), after a wrong method has had its 405.
 */
export function route(router: Router, path: string, handlers: Handlers, before: RequestHandler[] = []): void {
  const r = router.route(path);
  r.all((req, res, next) => {
    res.locals.route = `${req.baseUrl}${path}`;
    next();
  });
  const allow: string[] = [];
  for (const [method, handler] of Object.entries(handlers) as [keyof Handlers, Handler][]) {
    r[method](...before, ...[handler].flat());
    allow.push(method.toUpperCase());
  }
  if (allow.includes('GET')) allow.push('HEAD');
  r.all(() => {
    throw new MethodNotAllowed(allow);
  });
}

/** The route template the request matched, never the raw path; "unmatched" when none did. */
export const routeTemplate = (res: Response): string => (res.locals.route as string | undefined) ?? 'unmatched';
