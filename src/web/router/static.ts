import express, { type RequestHandler, type Router } from 'express';
import { route } from '../../http/method';
import { STATIC_DIR } from '../views';

const CSP = [
  "default-src 'self'",
  "img-src 'self' data: https: http:",
  // The player plays episodes from the podcasts' own hosts (castsync does not proxy media).
  "media-src 'self' https: http:",
  "style-src 'self'",
  "script-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "object-src 'none'",
].join('; ');

/** The pages' Content-Security-Policy. */
export const contentSecurity: RequestHandler = (_req, res, next) => {
  res.set('Content-Security-Policy', CSP);
  next();
};

/** The static files, the service worker, and the pages' Content-Security-Policy. */
export function staticRoutes(r: Router): void {
  r.use('/static', express.static(STATIC_DIR, { index: false, maxAge: '1h' }));
  // The service worker, at the root so that its scope is the whole site; never cached, so a new release's
  // worker is found at the next visit.
  route(r, '/sw.js', {
    get: (_req, res) => {
      res.set('Cache-Control', 'no-cache').type('text/javascript').sendFile('sw.js', { root: STATIC_DIR });
    },
  });
  // Feed artwork comes from the feeds' own hosts; nothing else on these pages is from elsewhere.
  r.use(['/web', '/login/flow'], contentSecurity);
}
