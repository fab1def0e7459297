import express, { type RequestHandler, type Router } from 'express';
import type http from 'node:http';
import path from 'node:path';
import { route } from '../../http/method';
import { IMMUTABLE, STATIC_DIR, versionOf } from '../assets';

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

/** A file asked for at its versioned address (assets.ts) is kept for a year; at any other, for an hour. */
function keepVersioned(res: http.ServerResponse, file: string): void {
  const asked = new URL(res.req.url ?? '/', 'http://x').searchParams.get('v');
  if (asked !== null && asked === versionOf(path.basename(file))) res.setHeader('Cache-Control', IMMUTABLE);
}

/** The static files, the service worker, and the pages' Content-Security-Policy. */
export function staticRoutes(r: Router): void {
  r.use('/static', express.static(STATIC_DIR, { index: false, maxAge: '1h', setHeaders: keepVersioned }));
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
