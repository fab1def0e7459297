import { Router, type RequestHandler } from 'express';
import type { ApiContext } from '../api-context';
import { currentUser } from '../http/credentials';
import { route } from '../http/method';
import { error, json, jsonBody, type Documenter } from '../http/openapi';
import { z } from '../http/zod';
import * as notifications from '../notifications/service';
import { authErrors, secured } from './auth';
import { parseBody } from './validate';

// The account's settings an app may offer, experimental: castsync's own extension. Today the
// new-episode notifications (docs/notifications.md), so that an app can offer what the account page does.

const EXPERIMENTAL = "Experimental: castsync's own extension, whose shape may change.";

const notificationSettings = z
  .object({
    enabled: z.boolean().openapi({ description: 'Whether any new-episode notification is sent' }),
    url: z
      .string()
      .max(notifications.MAX_HOOK_URL_LENGTH)
      .nullable()
      .openapi({ description: 'An ntfy topic URL or a webhook that takes a JSON POST; null: none' }),
    kind: z.enum(notifications.HOOK_KINDS).openapi({ description: 'What the URL is' }),
    browsers: z.number().int().min(0).openapi({ description: 'Browsers subscribed to Web Push (read only)' }),
    daily_limit: z.number().int().min(0).openapi({ description: 'Most messages a day (read only, the server’s)' }),
  })
  .openapi('NotificationSettings');

export const accountSettings = z
  .object({ notifications: notificationSettings })
  .openapi('AccountSettings', { description: EXPERIMENTAL });

const settingsChange = z
  .object({
    notifications: notificationSettings.pick({ enabled: true, url: true, kind: true }).partial().strict(),
  })
  .partial()
  .strict()
  .openapi('AccountSettingsChange');

const testResult = z
  .object({
    ok: z.boolean(),
    status: z.number().int().optional().openapi({ description: "The URL's HTTP status, when it answered" }),
    answer: z.string().openapi({ description: 'The start of its answer, or why there was none' }),
  })
  .openapi('NotificationTest');

async function read(ctx: ApiContext, userId: number): Promise<z.infer<typeof accountSettings>> {
  const s = await notifications.notificationSettings(ctx.db, userId);
  const browsers = await notifications.browserCount(ctx.db, userId);
  return { notifications: { ...s, browsers, daily_limit: ctx.config.notifyDailyLimit } };
}

export function accountRoutes(ctx: ApiContext, user: RequestHandler): Router {
  const r = Router();
  const policy = () => notifications.deliverySettings(ctx.config).policy;
  route(
    r,
    '/account/settings',
    {
      get: async (req, res) => void res.json(await read(ctx, currentUser(req))),
      patch: async (req, res) => {
        const body = parseBody(settingsChange, req.body);
        if (body.notifications)
          await notifications.setNotificationSettings(ctx.db, currentUser(req), body.notifications, policy());
        res.json(await read(ctx, currentUser(req)));
      },
    },
    [user],
  );
  route(
    r,
    '/account/notifications/test',
    {
      post: async (req, res) => {
        const outcome = await notifications.sendTest(
          ctx.db,
          currentUser(req),
          notifications.deliverySettings(ctx.config),
        );
        res.json(outcome);
      },
    },
    [user],
  );
  return r;
}

export const documentAccount: Documenter = (r) => {
  r.registerPath({
    method: 'get',
    path: '/v1/account/settings',
    summary: "The account's settings (experimental)",
    description: `${EXPERIMENTAL} New-episode notifications (docs/notifications.md).`,
    security: secured,
    responses: { 200: json(accountSettings, 'The settings'), ...authErrors },
  });
  r.registerPath({
    method: 'patch',
    path: '/v1/account/settings',
    summary: "Change the account's settings (experimental)",
    description:
      `${EXPERIMENTAL} What is given changes, the rest stays. A URL must be http or https, and an address ` +
      'the server may reach (private addresses are refused unless the server allows them, as for feeds).',
    security: secured,
    request: jsonBody(settingsChange),
    responses: {
      200: json(accountSettings, 'The settings now'),
      ...authErrors,
      405: error('Body could not be validated, or the URL is refused'),
    },
  });
  r.registerPath({
    method: 'post',
    path: '/v1/account/notifications/test',
    summary: 'Send a test notification to the URL (experimental)',
    description: `${EXPERIMENTAL} Sends a test message now, and says what the URL answered.`,
    security: secured,
    responses: { 200: json(testResult, 'What the URL answered'), ...authErrors },
  });
};
