import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import type { ApiContext } from '../api-context';
import * as auth from '../auth/service';
import { cookieOf, setCookie as setHttpCookie } from '../http/cookies';
import { PageError } from './errors';

// The web page's sign-in: a browser session in a cookie of its own (never the gpodder API's sessionid),
// server-side and revocable; and CSRF protection of every form by the synchronizer token pattern.

export const SESSION_COOKIE = 'castsync_web';
/** Before sign-in, a random value in a cookie that the sign-in and sign-up forms must repeat. */
const PRESESSION_COOKIE = 'castsync_csrf';

declare module 'express-serve-static-core' {
  interface Locals {
    /** The signed-in user of a web page, with the token their forms carry. */
    account?: auth.Account;
    session?: string;
    csrf?: string;
  }
}

export const cookie = cookieOf;

/** Sets one of the web page's cookies (see src/http/cookies.ts: Secure over https or with an https PUBLIC_URL). */
export const setCookie = (
  ctx: ApiContext,
  req: Request,
  res: Response,
  name: string,
  value: string,
  attributes: string,
) => setHttpCookie(req, res, ctx.config.publicUrl, { name, value, attributes });

function startSession(ctx: ApiContext, req: Request, res: Response, token: string): void {
  setCookie(ctx, req, res, SESSION_COOKIE, token, `SameSite=Lax; Max-Age=${auth.BROWSER_SESSION_TTL_SECONDS}`);
}

export function endSession(ctx: ApiContext, req: Request, res: Response): void {
  setCookie(ctx, req, res, SESSION_COOKIE, '', 'SameSite=Lax; Max-Age=0');
}

/** A session's form token: derived from the session's secret, so it needs no storage of its own. */
const csrfOf = (session: string): string => createHmac('sha256', session).update('castsync-csrf').digest('base64url');

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

const csrfRefused = () =>
  new PageError(403, 'This form has expired or did not come from this site. Go back, reload the page and try again.');

/** The form token of a page shown before sign-in, set in its cookie. */
export function presessionToken(ctx: ApiContext, req: Request, res: Response): string {
  const existing = cookie(req, PRESESSION_COOKIE);
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const value = randomBytes(32).toString('base64url');
  setCookie(ctx, req, res, PRESESSION_COOKIE, value, 'SameSite=Strict');
  return value;
}

/** Checks the `_csrf` field of a form posted before sign-in against its cookie. */
export function checkPresession(req: Request): void {
  const sent = formField(req, '_csrf');
  const expected = cookie(req, PRESESSION_COOKIE);
  if (!sent || !expected || !same(sent, expected)) throw csrfRefused();
}

/** Where to go after sign-in: a path of this site only (never `//host` or a URL elsewhere), else New episodes. */
export const safeNext = (next: string | undefined): string => (next && /^\/(?![/\\])/.test(next) ? next : '/web/new');

export const formField = (req: Request, name: string): string | undefined => {
  const v = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'string' ? v : undefined;
};

/** Whether a form for a change nothing undoes was confirmed: its `confirm` field holds the username. */
export const confirmsName = (req: Request, username: string): boolean =>
  (formField(req, 'confirm') ?? '').trim() === username;

/** This request is the account's, in the browser session with this cookie value. */
function signedInWith(req: Request, res: Response, account: auth.Account, token: string): void {
  res.locals.account = account;
  res.locals.session = token;
  res.locals.csrf = csrfOf(token);
  req.userId = account.id;
}

/**
 * Loads the signed-in user when the browser has a live session: `res.locals.account`, the session and its
 * form token. Never refuses: pages that need a user use `signedIn`.
 */
export function loadSession(ctx: ApiContext): RequestHandler {
  return async (req, res, next) => {
    const token = cookie(req, SESSION_COOKIE);
    const userId = token ? await auth.authenticateBrowser(ctx, token) : undefined;
    const account = userId === undefined ? undefined : await auth.account(ctx.db, userId);
    if (account && token) signedInWith(req, res, account, token);
    next();
  };
}

/** Signs the browser in as the user: a new browser session, its cookie, and this request is theirs. */
export async function signInAs(ctx: ApiContext, req: Request, res: Response, userId: number): Promise<void> {
  const token = await auth.openBrowserSession(ctx.db, userId, req.headers['user-agent']);
  const account = await auth.account(ctx.db, userId);
  startSession(ctx, req, res, token);
  if (account) signedInWith(req, res, account, token);
}

/** Pages for signed-in users: anyone else is sent to the sign-in page, and back here after it. */
export const signedIn: RequestHandler = (req, res, next) => {
  if (res.locals.account) return next();
  if (req.method !== 'GET') return res.redirect(303, '/');
  res.redirect(303, `/?next=${encodeURIComponent(req.originalUrl)}`);
};

/** Every form a signed-in user posts carries the session's form token. */
export const checkCsrf: RequestHandler = (req, res, next) => {
  if (req.method === 'GET' || req.method === 'HEAD') return next();
  const sent = formField(req, '_csrf');
  if (!sent || !res.locals.csrf || !same(sent, res.locals.csrf)) throw csrfRefused();
  next();
};

/** Administrators only. */
export const adminOnly: RequestHandler = (_req, res, next) => {
  if (!res.locals.account?.isAdmin) throw new PageError(403, 'Only administrators may see this page');
  next();
};
