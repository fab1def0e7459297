import { createHash } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import type { ApiContext } from '../api-context';
import * as auth from '../auth/service';
import { cookieOf, setCookie } from '../http/cookies';
import { basicCredentials, bearerToken } from '../http/credentials';
import { clientKey, type FailureLimiter } from '../http/limits';
import { Unauthorized } from './errors';

const COOKIE = 'sessionid';

export const sessionCookie = (req: Request): string | undefined => cookieOf(req, COOKIE);

/**
 * The sessionid cookie: `token` for a year, or '' to end it. `Secure` only when the request came over https,
 * whatever PUBLIC_URL says: an app that reaches the server over plain http (a LAN address) would not send
 * a Secure cookie back, and AntennaPod sends nothing else after its login.
 */
export function setSessionCookie(req: Request, res: Response, token: string): void {
  const maxAge = token === '' ? 0 : auth.SESSION_TTL_SECONDS;
  setCookie(req, res, undefined, {
    name: COOKIE,
    value: token,
    attributes: `SameSite=Lax; Max-Age=${maxAge}`,
  });
}

declare module 'express-serve-static-core' {
  interface Locals {
    /** The gpodder session the request came with or was given. */
    session?: string;
  }
}

/**
 * Authentication of every gpodder and Nextcloud route: the sessionid cookie, HTTP Basic with the
 * password or an app password (personal access token), or an app password as a bearer token. A Basic request that came without a valid
 * cookie gets one; clients that never keep it (Kasts, Nextcloud-mode apps send Basic every time) are
 * given the same session again while their credentials are cached, rather than a new one per request.
 * A cookie gives way to Basic credentials naming another user. `{user}` in the path must be the
 * authenticated user (any case). Failures count toward the same limits as /v1, and get a Basic challenge.
 */
export function gpodderAuth(ctx: ApiContext, limiter: FailureLimiter): RequestHandler {
  const usernames = new Map<number, string>();
  const sessionOfCredentials = new Map<string, string>();
  ctx.authCache.onClear(() => sessionOfCredentials.clear());

  /** The user of the Basic credentials (else a bearer token), and the session to give them (Basic only). */
  const basicUser = async (req: Request): Promise<{ userId: number; given?: string }> => {
    const basic = basicCredentials(req.headers.authorization);
    if (!basic) return { userId: await bearerUser(req) };
    const userId = await limiter.attempt(clientKey(req, basic.username), () =>
      auth.authenticateBasic(ctx, basic.username, basic.password),
    );
    const key = createHash('sha256').update(`${basic.username}\0${basic.password}`).digest('base64');
    let session = sessionOfCredentials.get(key);
    // The hourly clean-up may have removed it since (expired, or past the user's newest 100): a cookie
    // that opens nothing would fail the clients that send only the cookie from then on.
    if (session !== undefined && (await auth.authenticateSession(ctx, session)) !== userId) session = undefined;
    if (!session) {
      session = await auth.openBasicSession(ctx, userId, basic, req.headers['user-agent']);
      if (session === undefined) throw new Unauthorized();
      if (sessionOfCredentials.size >= 10_000) sessionOfCredentials.clear();
      sessionOfCredentials.set(key, session);
    }
    return { userId, given: session };
  };

  // An app password as a bearer token, as Nextcloud accepts it (Music Assistant's Nextcloud mode sends it
  // so): sent on every request, so no session is given. A refused one does not count toward the limits
  // (src/opa/auth.ts says why).
  const bearerUser = async (req: Request): Promise<number> => {
    const token = bearerToken(req.headers.authorization);
    const userId = token === undefined ? undefined : await auth.authenticateBearer(ctx, token);
    if (userId === undefined) throw new Unauthorized();
    return userId;
  };

  const nameOf = async (userId: number): Promise<string | undefined> => {
    let username = usernames.get(userId);
    if (username === undefined) {
      username = await auth.usernameOf(ctx.db, userId);
      if (username !== undefined) usernames.set(userId, username);
    }
    return username;
  };
  /** `{user}` in a path names the user in any case. */
  const isNamed = async (userId: number, name: string): Promise<boolean> =>
    (await nameOf(userId))?.toLowerCase() === name.toLowerCase();

  /**
   * The user of the sessionid cookie, unless the request's Basic credentials name someone else: an app
   * signed in again as another user still sends the first one's cookie (its cookie jar lasts as long as
   * the app runs), and the credentials it sends are the ones it means. Basic names its user exactly, as
   * it signs in: `alice` and `Alice` may be two users.
   */
  const cookieUser = async (req: Request): Promise<number | undefined> => {
    const cookie = sessionCookie(req);
    const userId = cookie === undefined ? undefined : await auth.authenticateSession(ctx, cookie);
    if (userId === undefined) return undefined;
    const basic = basicCredentials(req.headers.authorization);
    return basic === undefined || (await nameOf(userId)) === basic.username ? userId : undefined;
  };

  return async (req, res, next) => {
    const fromCookie = await cookieUser(req);
    if (fromCookie !== undefined) res.locals.session = sessionCookie(req);
    const { userId, given } = fromCookie !== undefined ? { userId: fromCookie } : await basicUser(req);
    const named = req.params.user;
    if (named !== undefined && !(await isNamed(userId, String(named)))) throw new Unauthorized();
    // Given once the request is allowed: a refused one carries no cookie.
    if (given !== undefined) {
      setSessionCookie(req, res, given);
      res.locals.session = given;
    }
    req.userId = userId;
    next();
  };
}
