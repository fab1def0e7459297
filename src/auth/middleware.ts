import type { Request, RequestHandler } from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import type { Config } from '../config';
import type { Context } from '../context';
import { TooManyRequests, Unauthorized } from '../http/errors';
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
export function requireUser(ctx: Context): RequestHandler {
  return async (req, _res, next) => {
    const header = req.headers.authorization;
    const basic = basicCredentials(header);
    const token = basic ? undefined : bearerToken(header);
    const userId = basic
      ? await authenticateBasic(ctx, basic.username, basic.password)
      : token
        ? await authenticateBearer(ctx, token)
        : undefined;
    if (userId === undefined) throw new Unauthorized();
    req.userId = userId;
    next();
  };
}

/** The authenticated user's id (routes behind requireUser only). */
export function currentUser(req: Request): number {
  if (req.userId === undefined) throw new Unauthorized();
  return req.userId;
}

function limiter(config: Config, limit: number, username: (req: Request) => string): RequestHandler {
  return rateLimit({
    windowMs: config.rateLimitWindow * 1000,
    limit,
    standardHeaders: false,
    legacyHeaders: false,
    keyGenerator: (req) => `${ipKeyGenerator(req.ip ?? 'unknown')}|${username(req).toLowerCase()}`,
    // Only answers that refused the credentials count.
    skipSuccessfulRequests: true,
    requestWasSuccessful: (_req, res) => res.statusCode !== 401,
    handler: (req) => {
      const info = (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit;
      const reset = info?.resetTime?.getTime() ?? Date.now() + config.rateLimitWindow * 1000;
      throw new TooManyRequests((reset - Date.now()) / 1000);
    },
  });
}

/** Login attempts and failed authentication, limited per client address and username. */
export function authRateLimits(config: Config): { login: RequestHandler; failedAuth: RequestHandler } {
  return {
    login: limiter(config, config.loginRateLimit, (req) =>
      String((req.body as { username?: unknown } | undefined)?.username ?? ''),
    ),
    failedAuth: limiter(
      config,
      config.authFailureRateLimit,
      (req) => basicCredentials(req.headers.authorization)?.username ?? '(token)',
    ),
  };
}
