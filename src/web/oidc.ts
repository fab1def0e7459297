import { Router } from 'express';
import type { ApiContext } from '../api-context';
import type { Config } from '../config';
import { signInVouched } from '../auth/service';
import { SignInRefused } from '../errors';
import { route } from '../http/method';
import { PageError } from './errors';
import { cookie, safeNext, setCookie, signInAs } from './session';

// Sign-in with an OpenID provider (OIDC_ISSUER): the authorization code flow with PKCE, `state` and
// `nonce`, the provider found by discovery, and its ID token checked by openid-client. The person's user
// is found by the provider's subject (src/auth/identities.ts); the apps then get app passwords on the web
// page or through the Nextcloud login flow (docs/sso.md).

/** openid-client is an ES module: loaded with import() when sign-in with a provider is set up. */
type OpenidClient = typeof import('openid-client', { with: { 'resolution-mode': 'import' } });
type Configuration = InstanceType<OpenidClient['Configuration']>;

/** The browser's sign-in in progress, in a cookie of its own: checked, then spent, by the callback. */
const FLOW_COOKIE = 'castsync_oidc';
const FLOW_SECONDS = 10 * 60;
type Flow = { state: string; nonce: string; verifier: string; next: string };

const encodeFlow = (flow: Flow): string => Buffer.from(JSON.stringify(flow)).toString('base64url');

function decodeFlow(value: string | undefined): Flow | undefined {
  if (value === undefined || value === '') return undefined;
  try {
    const flow = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as Partial<Flow>;
    const { state, nonce, verifier, next } = flow;
    return [state, nonce, verifier, next].every((v) => typeof v === 'string') ? (flow as Flow) : undefined;
  } catch {
    return undefined;
  }
}

/** The OIDC door of the web page, when OIDC_ISSUER is set: its button's label, its routes, its sign-out. */
export type OidcSignIn = {
  label: string;
  routes: Router;
  /** The provider's end-session page, when it has one: offered after signing out of castsync. */
  endSessionUrl: () => Promise<string | undefined>;
};

export function oidcSignIn(ctx: ApiContext): OidcSignIn | undefined {
  const { config } = ctx;
  const issuer = config.oidcIssuer;
  if (issuer === undefined) return undefined;
  const clientId = config.oidcClientId!;
  const steps: Steps = {
    ctx,
    provider: discovery(ctx, issuer, clientId),
    redirectUrl: config.oidcRedirectUrl ?? `${config.publicUrl}/web/sign-in/oidc/callback`,
  };
  const routes = Router();
  startRoute(routes, steps);
  callbackRoute(routes, steps);
  return { label: config.oidcButtonLabel, routes, endSessionUrl: endSession(steps.provider, clientId) };
}

/** The provider as openid-client knows it, with the library itself. */
type Discovered = { lib: OpenidClient; provider: Configuration };

/** What the steps of a sign-in share: the provider, and the address it sends the browser back to. */
type Steps = { ctx: ApiContext; provider: () => Promise<Discovered>; redirectUrl: string };

/** The provider's metadata, discovered once (and again after a failure). */
function discovery({ config, logger }: ApiContext, issuer: string, clientId: string): () => Promise<Discovered> {
  let discovered: Promise<Discovered> | undefined;
  return () => {
    discovered ??= (async () => {
      const lib = await import('openid-client');
      const secret = config.oidcClientSecret;
      const auth = secret === undefined ? lib.None() : lib.ClientSecretBasic(secret);
      // An http:// issuer is the administrator's explicit choice (a provider on loopback or a test).
      const insecure = new URL(issuer).protocol === 'http:' ? { execute: [lib.allowInsecureRequests] } : {};
      // The timeout holds for discovery and for every later request to the provider.
      const options = { ...insecure, timeout: config.oidcTimeout };
      return { lib, provider: await lib.discovery(new URL(issuer), clientId, undefined, auth, options) };
    })().catch((err: unknown) => {
      discovered = undefined;
      logger.warn({ err, issuer }, 'the OpenID provider could not be discovered');
      const why = (err as Error).message;
      throw new PageError(
        502,
        `The identity provider could not be used (${why}). Try again later, or tell the administrator.`,
      );
    });
    return discovered;
  };
}

/** The first step: the browser is sent to the provider, with the flow it must come back with in a cookie. */
function startRoute(routes: Router, { ctx, provider, redirectUrl }: Steps): void {
  const { config } = ctx;
  // A link, not a form: CSP's form-action would stop a form's redirect to the provider. Starting a sign-in
  // needs no form token: what binds the answer to this browser is the state in its cookie.
  route(routes, '/web/sign-in/oidc', {
    get: async (req, res) => {
      const { lib, provider: p } = await provider();
      const flow: Flow = {
        state: lib.randomState(),
        nonce: lib.randomNonce(),
        verifier: lib.randomPKCECodeVerifier(),
        next: typeof req.query.next === 'string' ? req.query.next : '',
      };
      const url = lib.buildAuthorizationUrl(p, {
        redirect_uri: redirectUrl,
        scope: config.oidcScopes,
        code_challenge: await lib.calculatePKCECodeChallenge(flow.verifier),
        code_challenge_method: 'S256',
        state: flow.state,
        nonce: flow.nonce,
      });
      // Lax: the provider's redirect back is a top-level navigation from its site.
      setCookie(ctx, req, res, FLOW_COOKIE, encodeFlow(flow), `SameSite=Lax; Max-Age=${FLOW_SECONDS}`);
      res.redirect(303, url.href);
    },
  });
}

/** The second step: the provider's answer checked against the browser's flow, and the browser signed in. */
function callbackRoute(routes: Router, { ctx, provider, redirectUrl }: Steps): void {
  const { config, logger } = ctx;
  route(routes, '/web/sign-in/oidc/callback', {
    get: async (req, res) => {
      const flow = decodeFlow(cookie(req, FLOW_COOKIE));
      setCookie(ctx, req, res, FLOW_COOKIE, '', 'SameSite=Lax; Max-Age=0');
      if (flow === undefined) {
        throw new PageError(
          400,
          'This sign-in has expired (after 10 minutes) or was started in another browser: sign in again.',
        );
      }
      const discovered = await provider();
      const answered = new URL(redirectUrl);
      answered.search = new URL(req.originalUrl, 'http://callback').search;
      const claims = await claimsOf(discovered, config, answered, flow).catch((err: unknown) => {
        logger.warn({ err: String(err) }, 'a sign-in with the OpenID provider was refused');
        throw refused(err);
      });
      const username = claims[config.oidcUsernameClaim];
      if (typeof username !== 'string' || username === '') {
        throw new SignInRefused(
          `The identity provider did not say who you are (no "${config.oidcUsernameClaim}" claim): ` +
            'the administrator can choose the claim with OIDC_USERNAME_CLAIM.',
        );
      }
      const userId = await signInVouched(
        ctx.db,
        {
          username,
          provider: { issuer: discovered.provider.serverMetadata().issuer, subject: String(claims.sub) },
          admin:
            config.oidcAdminGroup === undefined ? undefined : groups(config, claims).includes(config.oidcAdminGroup),
        },
        { createUsers: config.ssoCreateUsers },
      );
      await signInAs(ctx, req, res, userId);
      res.redirect(303, safeNext(flow.next));
    },
  });
}

/** The claims of the provider's answer: its ID token's, and its userinfo answer's when the token lacks one. */
async function claimsOf(
  { lib, provider: p }: Discovered,
  config: Config,
  answered: URL,
  flow: Flow,
): Promise<Record<string, unknown>> {
  const tokens = await lib.authorizationCodeGrant(p, answered, {
    pkceCodeVerifier: flow.verifier,
    expectedState: flow.state,
    expectedNonce: flow.nonce,
  });
  const idToken: Record<string, unknown> = { ...tokens.claims() };
  const needed = [config.oidcUsernameClaim, ...(config.oidcAdminGroup ? [config.oidcGroupsClaim] : [])];
  // Some providers put profile claims in the userinfo answer only.
  if (needed.every((c) => idToken[c] !== undefined)) return idToken;
  return { ...(await lib.fetchUserInfo(p, tokens.access_token, String(idToken.sub))), ...idToken };
}

/** The groups the provider says the person is in (OIDC_GROUPS_CLAIM). */
function groups(config: Config, claims: Record<string, unknown>): string[] {
  const value = claims[config.oidcGroupsClaim];
  const list = Array.isArray(value) ? value : [value];
  return list.filter((g): g is string => typeof g === 'string');
}

/** The provider's end-session page, when it has one (and can be reached). */
function endSession(provider: () => Promise<Discovered>, clientId: string): () => Promise<string | undefined> {
  return async () => {
    try {
      const { lib, provider: p } = await provider();
      if (p.serverMetadata().end_session_endpoint === undefined) return undefined;
      return lib.buildEndSessionUrl(p, { client_id: clientId }).href;
    } catch {
      return undefined;
    }
  };
}

/**
 * What the person sees when the sign-in does not complete: the provider's own refusal (403), a check that
 * failed (a tampered or replayed answer, a wrong issuer, an expired code: 400), or no answer, or a failure
 * of the provider's own (502).
 */
function refused(err: unknown): PageError {
  const e = err as {
    name?: string;
    code?: string;
    error?: string;
    error_description?: string;
    message?: string;
    cause?: unknown;
  };
  // openid-client names the kind of failure; the check that failed is its cause's message. A request that
  // timed out or was aborted, and an answer of the provider's that is a server error, are its ClientError
  // with a code, and the Response as the cause of the latter.
  const detail = e.cause instanceof Error ? e.cause.message : e.message;
  const again = 'Sign in again from the sign-in page.';
  const failedAtProvider = e.cause instanceof Response && e.cause.status >= 500;
  if (e.code === 'OAUTH_TIMEOUT' || e.code === 'OAUTH_ABORT' || failedAtProvider)
    return new PageError(502, 'The identity provider did not answer. Try again later.');
  switch (e.name) {
    case 'AuthorizationResponseError':
      return new PageError(403, `The identity provider did not sign you in (${e.error_description ?? e.error}).`);
    case 'ResponseBodyError':
      return new PageError(
        400,
        `The identity provider refused this sign-in (${e.error_description ?? e.error}). ${again}`,
      );
    case 'TypeError':
    case 'AbortError':
    case 'TimeoutError':
      return new PageError(502, 'The identity provider did not answer. Try again later.');
    default:
      return new PageError(400, `This sign-in's answer did not check out (${detail}). ${again}`);
  }
}
