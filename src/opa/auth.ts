import { Router, type RequestHandler } from 'express';
import type { ApiContext } from '../api-context';
import * as auth from '../auth/service';
import { basicCredentials, bearerToken, currentUser } from '../http/credentials';
import { Unauthorized } from './errors';
import { route } from '../http/method';
import { clientKey, type AuthLimits, type FailureLimiter } from '../http/limits';
import { error, json, jsonBody, type Documenter } from '../http/openapi';
import { parseBody } from './validate';
import { loginBody, logoutBody, refreshBody, sessionResponse, type SessionOut } from './auth-schemas';

/**
 * Every route behind this has an authenticated user, by HTTP Basic or a bearer token. Refused Basic
 * credentials count toward the address's and username's limit; a refused bearer token does not: it is 256
 * random bits, no guess worth counting (most often an access token that has just expired, the normal end
 * of one), and counted under the address alone it would lock out every bearer client of the address. A
 * request with neither is no guess either.
 */
export function requireUser(ctx: ApiContext, limiter: FailureLimiter): RequestHandler {
  return async (req, _res, next) => {
    const header = req.headers.authorization;
    const basic = basicCredentials(header);
    if (basic) {
      req.userId = await limiter.attempt(clientKey(req, basic.username), () =>
        auth.authenticateBasic(ctx, basic.username, basic.password),
      );
    } else {
      const token = bearerToken(header);
      req.userId = token === undefined ? undefined : await auth.authenticateBearer(ctx, token);
      if (req.userId === undefined) throw new Unauthorized();
    }
    next();
  };
}

const presentSession = (s: auth.Session): SessionOut => ({
  access_token: s.accessToken,
  expires_in: s.expiresIn,
  refresh_token: s.refreshToken,
  refresh_expires: s.refreshExpires.toISOString(),
  refresh_endpoint: '/v1/auth/refresh',
});

/**
 * /v1/auth/login and /v1/auth/refresh need no credentials beyond the body; /v1/auth/logout needs `user`.
 */
export function authRoutes(ctx: ApiContext, limits: AuthLimits, user: RequestHandler): Router {
  const r = Router();
  route(r, '/auth/login', {
    post: async (req, res) => {
      const { username, password } = parseBody(loginBody, req.body);
      const userId = await limits.login.attempt(clientKey(req, username), () =>
        auth.checkLogin(ctx, username, password),
      );
      res.json(presentSession(await auth.openLogin(ctx, userId)));
    },
  });
  route(r, '/auth/refresh', {
    post: async (req, res) => {
      const { refresh_token } = parseBody(refreshBody, req.body);
      const session = await auth.refresh(ctx, refresh_token);
      if (!session) throw new Unauthorized();
      res.json(presentSession(session));
    },
  });
  route(
    r,
    '/auth/logout',
    {
      post: async (req, res) => {
        const { refresh_token } = parseBody(logoutBody, req.body ?? {});
        await auth.logout(ctx, currentUser(req), refresh_token);
        res.status(204).end();
      },
    },
    [user],
  );
  return r;
}

export const secured: Record<string, string[]>[] = [{ basic: [] }, { bearer: [] }];
export const authErrors = { 401: error('No, wrong or expired credentials'), 429: error('Too many failed attempts') };

export const documentAuth: Documenter = (r) => {
  r.registerComponent('securitySchemes', 'basic', {
    type: 'http',
    scheme: 'basic',
    description: 'Username and password, or username and an app password (personal access token)',
  });
  r.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'An access token from /v1/auth/login, or an app password (personal access token)',
  });
  r.registerPath({
    method: 'post',
    path: '/v1/auth/login',
    summary: 'Exchange a username and password for tokens',
    request: jsonBody(loginBody),
    responses: { 200: json(sessionResponse, 'Tokens'), ...authErrors, 405: error('Body could not be validated') },
  });
  r.registerPath({
    method: 'post',
    path: '/v1/auth/refresh',
    summary: 'Exchange a refresh token for new tokens (the old one is spent)',
    request: jsonBody(refreshBody),
    responses: { 200: json(sessionResponse, 'Tokens'), 401: error('Unknown, expired or used refresh token') },
  });
  r.registerPath({
    method: 'post',
    path: '/v1/auth/logout',
    summary: 'Revoke the session of a refresh token, or every session of the user',
    security: secured,
    request: jsonBody(logoutBody),
    responses: { 204: { description: 'Revoked' }, ...authErrors },
  });
};
