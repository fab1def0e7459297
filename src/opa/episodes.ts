import { Router, type RequestHandler } from 'express';
import type { ApiContext } from '../api-context';
import { currentUser } from '../http/credentials';
import { route } from '../http/method';
import { error, json, jsonBody, type Documenter } from '../http/openapi';
import { z } from '../http/zod';
import * as records from '../episodes/records';
import { parseGuid, podcastGuid } from '../subscriptions/urls';
import { iso, parseTimestamp } from '../timestamps';
import { authErrors, secured } from './auth';
import { PayloadTooLarge } from './errors';
import { pageOf, pagedResponses } from './paging';
import { listQuery, MAX_ITEMS, pageEnvelope } from './schemas';
import { parseBody, parseQuery } from './validate';

// Episodes, experimental: the shape of the Open Podcast API's episodes draft (docs/clients.md), which
// may still change, over the episode actions every app uploads.

const EXPERIMENTAL = 'Experimental: the shape of the Open Podcast API episodes draft, which may change with the draft.';

/** A piece of an episode's state: its value, and when (the app's time) it took that value. */
const stamped = <T extends z.ZodType>(value: T, description: string) =>
  z
    .object({
      value,
      timestamp: z.string().openapi({ format: 'date-time', example: '2026-11-22T10:15:30.123Z' }),
    })
    .openapi({ description });

const state = {
  playback_position: stamped(z.number().int().min(0), 'Seconds into the episode, at the latest play').optional(),
  played_status: stamped(z.boolean(), 'Played to the end (or marked so), not since marked unplayed'),
  new_status: stamped(z.boolean(), 'Marked new (unplayed) after its latest play').optional(),
  download_status: stamped(z.boolean(), 'Downloaded (true) or deleted (false), as the apps said last').optional(),
};

export const episodeRecord = z
  .object({
    podcast_guid: z.string().openapi({
      format: 'uuid',
      description: "The user's subscription's guid; for a podcast that is not one, its Podcasting 2.0 guid",
    }),
    podcast_url: z
      .string()
      .optional()
      .openapi({ description: 'The feed URL the apps named the podcast by (an extension, always sent)' }),
    sync_id: z.string().openapi({ format: 'uuid', description: "The episode's id: the key of its enclosure URL" }),
    episode_guid: z.string().nullable(),
    title: z.string().nullable(),
    publish_date: z.string().nullable().openapi({ format: 'date-time' }),
    enclosure_url: z.string(),
    episode_url: z.string().nullable(),
    ...state,
    favorite_status: stamped(z.boolean(), 'A favourite of the user (set or cleared at that time)').optional(),
  })
  .openapi('Episode', { description: EXPERIMENTAL });
export const episodePage = pageEnvelope.extend({ episodes: z.array(episodeRecord) }).openapi('EpisodePage');

const stampedIn = z.object({ value: z.unknown(), timestamp: z.string() }).optional();
export const episodeWrite = z
  .object({
    podcast_guid: z.string().optional(),
    podcast_url: z.string().optional(),
    sync_id: z.string().optional(),
    temporary_id: z.union([z.string(), z.number()]).optional(),
    episode_guid: z.string().nullable().optional(),
    title: z.string().nullable().optional(),
    publish_date: z.string().nullable().optional(),
    enclosure_url: z.string().nullable().optional(),
    episode_url: z.string().nullable().optional(),
    playback_position: state.playback_position,
    played_status: state.played_status.optional(),
    new_status: state.new_status,
    download_status: state.download_status,
    favorite_status: stampedIn,
  })
  .openapi('EpisodeWrite', { description: EXPERIMENTAL });
export const episodesBody = z.array(episodeWrite).openapi('EpisodesRequest');

const failure = z.object({
  temporary_id: z.union([z.string(), z.number()]).optional(),
  sync_id: z.string().optional(),
  enclosure_url: z.string().nullable().optional(),
  message: z.string(),
});
export const episodesResult = z
  .object({
    success: z.array(
      z.object({
        temporary_id: z.union([z.string(), z.number()]).optional(),
        sync_id: z.string(),
        podcast_guid: z.string(),
        enclosure_url: z.string(),
      }),
    ),
    failure: z.array(failure),
  })
  .openapi('EpisodesResult');

type EpisodeRecord = z.infer<typeof episodeRecord>;
type Write = z.infer<typeof episodeWrite>;

/** A favorite_status as sent: its value must be a boolean (the schema takes anything, to answer per record). */
function favourite(s: { value: unknown; timestamp: string } | undefined) {
  if (s === undefined) return undefined;
  if (typeof s.value !== 'boolean') throw new Error('Invalid favorite_status.value: expected a boolean');
  return { value: s.value, timestamp: s.timestamp };
}

const out = <T>(s: records.Stamped<T>) => ({ value: s.value, timestamp: iso(s.at) });

function present(r: records.EpisodeRecord): EpisodeRecord {
  return {
    podcast_guid: r.podcastGuid ?? podcastGuid(r.podcastUrl),
    podcast_url: r.podcastUrl,
    sync_id: r.syncId,
    episode_guid: r.episodeGuid,
    title: r.title,
    publish_date: r.publishedAt && iso(r.publishedAt),
    enclosure_url: r.enclosureUrl,
    episode_url: r.episodeUrl,
    ...(r.position && { playback_position: out(r.position) }),
    played_status: out(r.played),
    ...(r.isNew && { new_status: out(r.isNew) }),
    ...(r.downloaded && { download_status: out(r.downloaded) }),
    ...(r.favourite && { favorite_status: out(r.favourite) }),
  };
}

/** What an app names an episode by in a /v1 body. */
type IdentityFields = Pick<Write, 'podcast_guid' | 'podcast_url' | 'sync_id' | 'episode_guid' | 'enclosure_url'>;

/** The episode a /v1 body names, as the domain takes it; throws an Error saying why when a guid is not a UUID. */
export function identityOf(w: IdentityFields): records.EpisodeIdentity {
  const guid = (name: string, value: string | undefined) => {
    if (value === undefined) return undefined;
    const parsed = parseGuid(value);
    if (parsed === undefined) throw new Error(`Invalid ${name}: not a UUID`);
    return parsed;
  };
  return {
    podcastGuid: guid('podcast_guid', w.podcast_guid),
    podcastUrl: w.podcast_url,
    syncId: guid('sync_id', w.sync_id),
    episodeGuid: w.episode_guid,
    enclosureUrl: w.enclosure_url,
  };
}

/** A record as sent, as the domain takes it; or why not (its timestamps are the apps' local-less UTC). */
function writeOf(w: Write): records.RecordWrite | string {
  const at = <T>(name: string, s: { value: T; timestamp: string } | undefined) => {
    if (s === undefined) return undefined;
    const when = parseTimestamp(s.timestamp, { zonelessIsUtc: true });
    if (!when) throw new Error(`Invalid ${name}.timestamp: expected an ISO 8601 date-time`);
    return { value: s.value, at: when };
  };
  try {
    return {
      ...identityOf(w),
      position: at('playback_position', w.playback_position),
      played: at('played_status', w.played_status),
      isNew: at('new_status', w.new_status),
      downloaded: at('download_status', w.download_status),
      favourite: at('favorite_status', favourite(w.favorite_status)),
    };
  } catch (err) {
    return (err as Error).message;
  }
}

/** One success or failure entry per record sent, in order, with its temporary_id echoed. */
function presentOutcomes(body: Write[], outcomes: records.RecordOutcome[]): z.infer<typeof episodesResult> {
  const result: z.infer<typeof episodesResult> = { success: [], failure: [] };
  body.forEach((sent, i) => {
    const o = outcomes[i]!;
    const echo = { ...(sent.temporary_id !== undefined && { temporary_id: sent.temporary_id }) };
    if (o.ok) {
      const podcast_guid = o.podcastGuid ?? podcastGuid(o.podcastUrl);
      result.success.push({ ...echo, sync_id: o.syncId, podcast_guid, enclosure_url: o.enclosureUrl });
      return;
    }
    result.failure.push({
      ...echo,
      ...(sent.sync_id !== undefined && { sync_id: sent.sync_id }),
      ...(sent.enclosure_url !== undefined && { enclosure_url: sent.enclosure_url }),
      message: o.message,
    });
  });
  return result;
}

export function episodeRoutes(ctx: ApiContext, user: RequestHandler): Router {
  const r = Router();
  route(
    r,
    '/episodes',
    {
      get: async (req, res) => {
        const q = parseQuery(listQuery, req.query);
        const found = await records.page(ctx.db, currentUser(req), {
          since: q.since,
          page: q.page,
          perPage: q.per_page,
        });
        res.set('Sync-Timestamp', iso(found.syncPoint));
        res.json({ ...pageOf(ctx, req, '/v1/episodes', q, found.total), episodes: found.records.map(present) });
      },
      post: async (req, res) => {
        const body = parseBody(episodesBody, req.body);
        if (body.length > MAX_ITEMS) throw new PayloadTooLarge(`At most ${MAX_ITEMS} episodes in one request`);
        const limits = { maxFavourites: ctx.config.favouritesMax };
        const outcomes = await records.save(ctx.db, currentUser(req), body.map(writeOf), limits);
        res.json(presentOutcomes(body, outcomes));
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
    summary: 'Episodes changed after a time, paged (experimental)',
    description: `${EXPERIMENTAL} One record per episode the user has an action of, in a stable order.`,
    security: secured,
    request: { query: listQuery },
    responses: pagedResponses(episodePage, 'A page of episode records'),
  });
  r.registerPath({
    method: 'post',
    path: '/v1/episodes',
    summary: 'Add or update episodes (experimental)',
    description: `${EXPERIMENTAL} Each record is stored as the episode actions that say the same.`,
    security: secured,
    request: jsonBody(episodesBody),
    responses: {
      200: json(episodesResult, 'One success or failure entry per episode, in request order'),
      ...authErrors,
      405: error('Body could not be validated'),
      413: error('Body over 1 MiB or more than 1,000 episodes'),
      415: error('Body is not JSON'),
    },
  });
};
