import { Router, type RequestHandler } from 'express';
import type { ApiContext } from '../api-context';
import * as episodes from '../episodes/service';
import { currentUser } from '../http/credentials';
import { route } from '../http/method';
import type { Documenter } from '../http/openapi';
import { iso } from '../timestamps';
import { parseQuery } from './validate';
import { z } from '../http/zod';
import { secured } from './auth';
import { pageOf, pagedResponses } from './paging';
import { listQuery, pageEnvelope } from './schemas';

export const episodeRecord = z
  .object({
    podcast_url: z.string(),
    podcast_guid: z.string().optional().openapi({ description: "The subscription's guid, when the podcast is one" }),
    episode_guid: z.string().optional(),
    enclosure_url: z.string().openapi({ description: "The episode's media URL" }),
    status: z.enum(['download', 'play', 'delete', 'new']),
    playback_position: z.number().int().optional().openapi({ description: 'Seconds, for play' }),
    started: z.number().int().optional(),
    total: z.number().int().optional(),
    device: z.string().optional(),
    timestamp: z.string().openapi({ format: 'date-time', description: "The action's own time" }),
  })
  .openapi('EpisodeRecord');
export const episodePage = pageEnvelope.extend({ episodes: z.array(episodeRecord) }).openapi('EpisodePage');
type EpisodeRecord = z.infer<typeof episodeRecord>;

function present(a: episodes.StoredAction & { podcastGuid?: string }): EpisodeRecord {
  const out: EpisodeRecord = {
    podcast_url: a.podcastUrl,
    enclosure_url: a.episodeUrl,
    status: a.action,
    timestamp: iso(a.at),
  };
  if (a.podcastGuid !== undefined) out.podcast_guid = a.podcastGuid;
  if (a.guid !== undefined) out.episode_guid = a.guid;
  if (a.position !== undefined) out.playback_position = a.position;
  if (a.started !== undefined) out.started = a.started;
  if (a.total !== undefined) out.total = a.total;
  if (a.device !== undefined) out.device = a.device;
  return out;
}

/** A read-only view of the episode actions the gpodder and Nextcloud apps upload, for OPA clients. */
export function episodeRoutes(ctx: ApiContext, user: RequestHandler): Router {
  const r = Router();
  route(
    r,
    '/episodes',
    {
      get: async (req, res) => {
        const q = parseQuery(listQuery, req.query);
        const found = await episodes.page(ctx.db, currentUser(req), {
          since: q.since,
          page: q.page,
          perPage: q.per_page,
        });
        res.set('Sync-Timestamp', iso(found.syncPoint));
        res.json({ ...pageOf(ctx, req, '/v1/episodes', q, found.total), episodes: found.actions.map(present) });
      },
    },
    [user],
  );
  return r;
}

export const documentEpisodes: Documenter = (r) => {
  r.registerPath({
    method: 'get',
    path: '/v1/episodes',
    summary: 'Episode actions stored after a time, paged (read-only)',
    security: secured,
    request: { query: listQuery },
    responses: pagedResponses(episodePage, 'A page of actions, in the order stored'),
  });
};
