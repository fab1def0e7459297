import type { Request } from 'express';

declare module 'express-serve-static-core' {
  interface Request {
    /** The authenticated user, set by an adapter's authentication middleware. */
    userId?: number;
  }
}

export function basicCredentials(header: string | undefined): { username: string; password: string } | undefined {
  const m = /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(header ?? '');
  if (!m) return undefined;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

export const bearerToken = (header: string | undefined): string | undefined =>
  /^Bearer +(\S+) *$/i.exec(header ?? '')?.[1];

/** The authenticated user's id: routes behind a door's authentication only (anything else is a bug, a 500). */
export function currentUser(req: Request): number {
  if (req.userId === undefined) throw new Error('a route without authentication asked for the user');
  return req.userId;
}
