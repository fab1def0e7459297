import type { RequestHandler } from 'express';
import { inRanges } from '../addresses';
import type { ApiContext } from '../api-context';
import { signInVouched } from '../auth/service';
import { signInAs } from './session';

/**
 * Sign-in by a trusted reverse proxy (TRUSTED_AUTH_HEADER, e.g. Authelia's Remote-User): the header names
 * the person, and is believed only when the TCP peer is one of TRUSTED_PROXIES; from anywhere else it is
 * ignored (and logged, once). Only the web page and the login flow's approval page use it: the apps sign
 * in with app passwords (docs/sso.md). The header's user gets a browser session of their own, so forms
 * carry a form token as with any other sign-in; a browser signed in as someone else is switched over.
 */
export function trustedProxySignIn(ctx: ApiContext): RequestHandler {
  const header = ctx.config.trustedAuthHeader;
  const proxies = ctx.config.trustedProxies;
  let warned = false;
  return async (req, res, next) => {
    const named = header === undefined ? undefined : req.get(header)?.trim();
    if (named === undefined || named === '') return next();
    const peer = req.socket.remoteAddress ?? '';
    if (!inRanges(peer, proxies)) {
      if (!warned) {
        warned = true;
        ctx.logger.warn(
          { peer, header },
          'a sign-in header came from an address that is not in TRUSTED_PROXIES: ignored (logged once)',
        );
      }
      return next();
    }
    if (res.locals.account?.username === named) return next();
    const userId = await signInVouched(ctx.db, { username: named }, { createUsers: ctx.config.ssoCreateUsers });
    await signInAs(ctx, req, res, userId);
    next();
  };
}
