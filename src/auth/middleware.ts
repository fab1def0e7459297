import type { Request, RequestHandler } from 'express';
import type { Context } from '../context';
import { Unauthorized } from '../http/errors';
import { clientKey, type FailureLimiter } from './limits';
import { authenticateBasic, authenticateBearer } from './service';

declare module 'express-serve-static-core' {
  interface Request {
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

const bearerToken = (header: string | undefined): string | undefined => /^Bearer +(\S+) *$/i.exec(header ?? '')?.[1];

/** Every /v1 route behind this has an authenticated user, by HTTP Basic or a bearer token. */
export function requireUser(ctx: Context, limiter: FailureLimiter): RequestHandler {
  return async (req, _res, next) => {
    const header = req.headers.authorization;
    const basic = basicCredentials(header);
    req.userId = await limiter.attempt(
      () => clientKey(req, basic ? basic.username : '(token)'),
      async () => {
        if (basic) return authenticateBasic(ctx, basic.username, basic.password);
        const token = bearerToken(header);
        return token === undefined ? undefined : authenticateBearer(ctx, token);
      },
    );
    next();
  };
}

/** The authenticated user's id (routes behind requireUser only). */
export function currentUser(req: Request): number {
  if (req.userId === undefined) throw new Unauthorized();
  return req.userId;
}
