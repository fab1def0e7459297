import { Router, type RequestHandler } from 'express';
import type { ApiContext } from '../api-context';
import * as auth from '../auth/service';
import { currentUser } from '../http/credentials';
import { NotFound } from './errors';
import { route } from '../http/method';
import { uploadChanges } from './api2/subscriptions';
import { pull } from './feeds';
import { loginFlowLimit } from './address-limits';
import { anyJson, anyText, baseUrl } from './http';
import { parseSince } from './sync-time';
import { storable } from '../text';
import { error, json, jsonBody, type Documenter } from '../http/openapi';
import { z } from '../http/zod';
import { authErrors, gpodder, nextcloudPath, param } from './docs';
import { changesBody, changesResponse, loginFlowResponse, loginFlowResult, sinceQuery } from './schemas';

/** The Nextcloud app's paths, with and without /index.php (some clients and proxies drop it). */
export const NEXTCLOUD_PREFIXES = ['/index.php', ''];

/** The page the app opens in a browser for the user to allow it in. */
export const approvalPath = (code: string) => `/login/flow/${encodeURIComponent(code)}`;

/** The poll token from a form body (`token=...`, what the apps send) or a JSON one. */
function pollToken(body: unknown): string | undefined {
  const text = typeof body === 'string' ? body.trim() : '';
  if (text.startsWith('{')) {
    try {
      const token = (JSON.parse(text) as { token?: unknown }).token;
      return typeof token === 'string' ? token : undefined;
    } catch {
      return undefined;
    }
  }
  return new URLSearchParams(text).get('token') ?? undefined;
}

/** The Nextcloud gpoddersync dialect over the same store, and Nextcloud's login flow v2. */
export function nextcloudRoutes(ctx: ApiContext, user: RequestHandler): Router {
  const r = Router();
  // One count for both paths of the flow's start.
  const startLimit = loginFlowLimit();
  for (const prefix of NEXTCLOUD_PREFIXES) {
    const app = `${prefix}/apps/gpoddersync`;
    route(
      r,
      `${app}/subscriptions`,
      {
        get: async (req, res) => {
          res.json(await pull(ctx.db, currentUser(req), parseSince(req.query.since)));
        },
      },
      [user],
    );
    route(
      r,
      `${app}/subscription_change/create`,
      {
        post: [
          anyJson,
          async (req, res) => {
            const done = await uploadChanges(ctx, req, undefined);
            res.json({ timestamp: done.timestamp });
          },
        ],
      },
      [user],
    );
    route(r, `${prefix}/login/v2`, {
      post: [
        startLimit,
        async (req, res) => {
          const flow = await auth.startLoginFlow(ctx.db, req.headers['user-agent'] ?? 'an app');
          const base = baseUrl(ctx, req);
          res.json({
            poll: { token: flow.pollToken, endpoint: `${base}${prefix}/login/v2/poll` },
            login: `${base}${approvalPath(flow.code)}`,
          });
        },
      ],
    });
    route(r, `${prefix}/login/v2/poll`, {
      post: [
        anyText,
        async (req, res) => {
          const token = pollToken(req.body);
          // A token that cannot be stored names no flow.
          const result = token === undefined || !storable(token) ? undefined : await auth.pollLoginFlow(ctx.db, token);
          if (!result) throw new NotFound();
          res.json({ server: baseUrl(ctx, req), loginName: result.loginName, appPassword: result.appPassword });
        },
      ],
    });
  }
  return r;
}

/** The Nextcloud gpoddersync subscription routes and its login flow, documented beside them. */
export const documentNextcloud: Documenter = (r) => {
  for (const prefix of NEXTCLOUD_PREFIXES) {
    const nc = nextcloudPath(r, prefix);
    nc('get', '/apps/gpoddersync/subscriptions', 'Subscription changes since a time', {
      security: gpodder,
      request: { query: sinceQuery },
      responses: { 200: json(changesResponse, 'Added and removed feeds, and the next since'), ...authErrors },
    });
    nc('post', '/apps/gpoddersync/subscription_change/create', 'Upload subscription changes', {
      security: gpodder,
      request: jsonBody(changesBody),
      responses: { 200: json(z.object({ timestamp: z.number().int() }), 'The timestamp'), ...authErrors },
    });
    nc('post', '/login/v2', 'Start a login flow (Nextcloud login flow v2)', {
      responses: {
        200: json(loginFlowResponse, 'The poll token and endpoint, and the page to open'),
        429: error('Too many flows started from this address: Retry-After says when to try again'),
      },
    });
    nc('post', '/login/v2/poll', 'Poll a login flow (form field token)', {
      responses: { 200: json(loginFlowResult, 'Approved: an app password, once'), 404: error('Not (yet) approved') },
    });
  }
  r.registerPath({
    method: 'get',
    path: '/login/flow/{code}',
    summary: 'The page an app opens for the user to allow it in',
    tags: ['Nextcloud gpoddersync'],
    request: { params: z.object({ code: param('The code in the login URL', 'x') }) },
    responses: {
      200: { description: 'The web page asking the signed-in user to allow the app (docs/web.md)' },
      303: { description: 'Not signed in: to the sign-in page, and back here after it' },
      404: { description: 'An HTML page: unknown, answered or expired flow' },
    },
  });
};
