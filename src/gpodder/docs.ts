import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { error } from '../http/openapi';
import { z } from '../http/zod';

// What the gpodder door's route files share to document their routes beside them (the way /v1's are):
// the parameters, the security, the common answers, and a registrar per tag.

export const episodeAction = z
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
export const param = (description: string, example: string) => z.string().openapi({ description, example });
export const user = param('The username (any case); must be the authenticated user', 'alice');
export const device = param('A device id: 1-64 characters of A-Z a-z 0-9 . _ -; an unknown one is created', 'phone');
export const format = param('opml, json or txt', 'opml');
export const gpodder: RouteConfig['security'] = [{ basic: [] }, { gpodderSession: [] }];
export const authErrors = {
  401: error('No, wrong or expired credentials, or another user'),
  429: error('Too many failed attempts'),
};
export const empty = { description: 'Done (empty body)' };
export const text = (description: string) => ({ description, content: { 'text/plain': { schema: z.string() } } });

type Rest = Partial<RouteConfig> & Pick<RouteConfig, 'responses'>;

/** Registers a gpodder.net v2 route (or the simple API's), with gpodder's security. */
export const gpodderPath =
  (r: OpenAPIRegistry) =>
  (method: RouteConfig['method'], p: string, summary: string, rest: Rest): void =>
    r.registerPath({ method, path: p, summary, tags: ['gpodder.net v2'], security: gpodder, ...rest });

/** Registers a Nextcloud gpoddersync route under a prefix (/index.php, or none). */
export const nextcloudPath =
  (r: OpenAPIRegistry, prefix: string) =>
  (method: RouteConfig['method'], p: string, summary: string, rest: Rest): void =>
    r.registerPath({ method, path: `${prefix}${p}`, summary, tags: ['Nextcloud gpoddersync'], ...rest });

export const byUser = { params: z.object({ user }) };
export const byDevice = { params: z.object({ user, device }) };
