import { Router, type RequestHandler } from 'express';
import type { ApiContext } from '../api-context';
import * as auth from '../auth/service';
import { currentUser } from '../http/credentials';
import { NotFound } from './errors';
import { route } from '../http/method';
import { uploadChanges } from './api2';
import { pull } from './feeds';
import { anyJson, anyText, baseUrl } from './http';
import { parseSince } from './sync-time';
import { storable } from '../text';

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
      post: async (req, res) => {
        const flow = await auth.startLoginFlow(ctx.db, req.headers['user-agent'] ?? 'an app');
        const base = baseUrl(ctx, req);
        res.json({
          poll: { token: flow.pollToken, endpoint: `${base}${prefix}/login/v2/poll` },
          login: `${base}${approvalPath(flow.code)}`,
        });
      },
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
