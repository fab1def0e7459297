import type { RequestHandler, Router } from 'express';
import { MethodNotAllowed } from './errors';

type Handlers = Partial<Record<'get' | 'post' | 'patch' | 'delete', RequestHandler>>;

/** Mounts a path's handlers; any other method gets 405 with an Allow header. */
export function route(router: Router, path: string, handlers: Handlers): void {
  const r = router.route(path);
  const allow: string[] = [];
  for (const [method, handler] of Object.entries(handlers) as [keyof Handlers, RequestHandler][]) {
    r[method](handler);
    allow.push(method.toUpperCase());
  }
  if (allow.includes('GET')) allow.push('HEAD');
  r.all(() => {
    throw new MethodNotAllowed(allow);
  });
}
