import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import { error, json, jsonBody, type Documenter } from '../http/openapi';
import { z } from '../http/zod';
import { documentDirectory } from './directory';
import { NEXTCLOUD_PREFIXES } from './nextcloud';
import {
  changesBody,
  changesResponse,
  deviceBody,
  deviceList,
  favoriteList,
  loginFlowResponse,
  loginFlowResult,
  pushResponse,
  sinceQuery,
  syncDevicesBody,
  syncDevicesResponse,
} from './schemas';

const episodeAction = z
  .object({
    podcast: z.string(),
    episode: z.string(),
    guid: z.string().optional(),
    action: z.enum(['download', 'play', 'delete', 'new']),
    timestamp: z
      .string()
      .optional()
      .openapi({ description: 'YYYY-MM-DDTHH:MM:SS, UTC', example: '2026-11-23T10:15:30' }),
    device: z.string().optional(),
    started: z.number().int().optional(),
    position: z.number().int().optional().openapi({ description: 'Seconds; required for play' }),
    total: z.number().int().optional(),
  })
  .openapi('EpisodeAction');
const param = (description: string, example: string) => z.string().openapi({ description, example });
const user = param('The username (any case); must be the authenticated user', 'alice');
const device = param('A device id: 1-64 characters of A-Z a-z 0-9 . _ -; an unknown one is created', 'phone');
const format = param('opml, json or txt', 'opml');
const gpodder: RouteConfig['security'] = [{ basic: [] }, { gpodderSession: [] }];
const authErrors = {
  401: error('No, wrong or expired credentials, or another user'),
  429: error('Too many failed attempts'),
};
const empty = { description: 'Done (empty body)' };
const text = (description: string) => ({ description, content: { 'text/plain': { schema: z.string() } } });

export const documentGpodder: Documenter = (r) => {
  r.registerComponent('securitySchemes', 'gpodderSession', {
    type: 'apiKey',
    in: 'cookie',
    name: 'sessionid',
    description: 'The session a gpodder login (or any Basic request without it) sets',
  });
  const path = (
    method: RouteConfig['method'],
    p: string,
    summary: string,
    rest: Partial<RouteConfig> & Pick<RouteConfig, 'responses'>,
  ) => r.registerPath({ method, path: p, summary, tags: ['gpodder.net v2'], security: gpodder, ...rest });
  const byUser = { params: z.object({ user }) };
  const byDevice = { params: z.object({ user, device }) };

  path('post', '/api/2/auth/{user}/login.json', 'Log in: sets the sessionid cookie', {
    request: byUser,
    responses: { 200: empty, ...authErrors },
  });
  path('post', '/api/2/auth/{user}/logout.json', 'Log out: ends the session of the cookie', {
    request: byUser,
    responses: { 200: empty, ...authErrors },
  });
  path('get', '/api/2/favorites/{user}.json', "The user's favourite episodes, as gpodder.net serves them", {
    request: byUser,
    responses: { 200: json(favoriteList, 'Favourite episodes, the newest set first'), ...authErrors },
  });
  path('get', '/api/2/devices/{user}.json', "The user's devices", {
    request: byUser,
    responses: { 200: json(deviceList, 'Devices'), ...authErrors },
  });
  path('post', '/api/2/devices/{user}/{device}.json', 'Create or update a device', {
    request: { ...byDevice, ...jsonBody(deviceBody) },
    responses: { 200: empty, 400: error('Unknown type or bad device id'), ...authErrors },
  });
  path('get', '/api/2/subscriptions/{user}/{device}.json', 'Subscription changes since a time', {
    request: { ...byDevice, query: sinceQuery },
    responses: {
      200: json(changesResponse, 'Added and removed feeds, and the next since'),
      400: error('Bad since'),
      ...authErrors,
    },
  });
  path('post', '/api/2/subscriptions/{user}/{device}.json', 'Upload subscription changes (one change; per URL)', {
    description:
      'Applied as one change. A URL refused by the URL rules is skipped and named as [sent, ""] in update_urls; ' +
      'a URL in both lists stays subscribed (docs/clients.md).',
    request: { ...byDevice, ...jsonBody(changesBody) },
    responses: {
      200: json(pushResponse, 'The timestamp, and URLs rewritten or refused'),
      400: error('A body that is not {add, remove} lists of strings'),
      ...authErrors,
    },
  });
  for (const method of ['get', 'post'] as const) {
    path(method, '/api/2/sync-devices/{user}.json', 'Device synchronisation: every device shares the list', {
      request: method === 'post' ? { ...byUser, ...jsonBody(syncDevicesBody) } : byUser,
      responses: { 200: json(syncDevicesResponse, 'All devices are synchronised'), ...authErrors },
    });
  }
  path('get', '/subscriptions/{user}.{format}', "The user's subscribed feeds (simple API)", {
    request: { params: z.object({ user, format }) },
    responses: {
      200: text('OPML, a JSON array of URLs, or one URL a line'),
      404: error('Unknown format'),
      ...authErrors,
    },
  });
  path('get', '/subscriptions/{user}/{device}.{format}', "The user's subscribed feeds (simple API)", {
    request: { params: z.object({ user, device, format }) },
    responses: {
      200: text('OPML, a JSON array of URLs, or one URL a line'),
      404: error('Unknown format'),
      ...authErrors,
    },
  });
  path('put', '/subscriptions/{user}/{device}.{format}', 'Add every listed feed; never removes (simple API)', {
    request: {
      params: z.object({ user, device, format }),
      body: { content: { 'text/plain': { schema: z.string() } } },
    },
    responses: { 200: empty, 400: error('The body is not in the named format'), ...authErrors },
  });
  const actions = z.array(episodeAction).openapi('EpisodeActions');
  const actionsResponse = json(z.object({ actions, timestamp: z.number().int() }), 'Actions, and the next since');
  const skipped = z
    .array(z.object({ index: z.number().int(), reason: z.string() }))
    .optional()
    .openapi({ description: 'Present when actions were skipped: their index in the body and why' });
  const episodesUploadResponse = z
    .object({ timestamp: z.number().int(), update_urls: z.array(z.tuple([z.string(), z.string()])), skipped })
    .openapi('GpodderEpisodeUploadResult');
  const episodesQuery = z.object({
    since: sinceQuery.shape.since,
    podcast: z.string().optional().openapi({ description: "One podcast's actions (any URL its subscription has had)" }),
    device: z.string().optional().openapi({ description: "One device's actions" }),
    aggregated: z
      .string()
      .optional()
      .openapi({ description: 'true: only the latest action of each episode and action type' }),
  });
  path('get', '/api/2/episodes/{user}.json', 'Episode actions since a time', {
    request: { ...byUser, query: episodesQuery },
    responses: { 200: actionsResponse, 400: error('Bad since'), ...authErrors },
  });
  path('post', '/api/2/episodes/{user}.json', 'Upload episode actions (per action)', {
    description: 'Every valid action is stored; an invalid one is skipped, logged and named in `skipped`.',
    request: { ...byUser, ...jsonBody(actions) },
    responses: {
      200: json(episodesUploadResponse, 'The timestamp, podcast URLs rewritten, and the actions skipped'),
      400: error('A body that is not a JSON array, or more than 5,000 actions'),
      ...authErrors,
    },
  });
  for (const prefix of NEXTCLOUD_PREFIXES) {
    const nc = (
      method: RouteConfig['method'],
      p: string,
      summary: string,
      rest: Partial<RouteConfig> & Pick<RouteConfig, 'responses'>,
    ) => r.registerPath({ method, path: `${prefix}${p}`, summary, tags: ['Nextcloud gpoddersync'], ...rest });
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
    nc('get', '/apps/gpoddersync/episode_action', 'Episode actions since a time', {
      security: gpodder,
      request: { query: sinceQuery },
      responses: { 200: actionsResponse, ...authErrors },
    });
    nc('post', '/apps/gpoddersync/episode_action/create', 'Upload episode actions (per action)', {
      security: gpodder,
      request: jsonBody(actions),
      responses: {
        200: json(z.object({ timestamp: z.number().int(), skipped }), 'The timestamp, and the actions skipped'),
        400: error('A body that is not a JSON array'),
        ...authErrors,
      },
    });
    nc('post', '/login/v2', 'Start a login flow (Nextcloud login flow v2)', {
      responses: { 200: json(loginFlowResponse, 'The poll token and endpoint, and the page to open') },
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
  documentDirectory(r);
};
