import { Router, type RequestHandler } from 'express';
import type { ApiContext } from '../api-context';
import { currentUser } from '../http/credentials';
import { route } from '../http/method';
import { error, json, jsonBody, type Documenter } from '../http/openapi';
import { z } from '../http/zod';
import { isRefusal, Refusal } from '../errors';
import * as episodes from '../episodes/service';
import { parseGuid, podcastGuid } from '../subscriptions/service';
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

const out = <T>(s: episodes.Stamped<T>) => ({ value: s.value, timestamp: iso(s.at) });

function present(r: episodes.EpisodeState): EpisodeRecord {
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

/** A guid field read as a UUID. */
function guidField(name: string, value: string | undefined): string | undefined | Refusal {
  if (value === undefined) return undefined;
  return parseGuid(value) ?? new Refusal(`Invalid ${name}: not a UUID`);
}

/** The episode a /v1 body names, as the domain takes it; or why not (a guid that is not a UUID). */
export function identityOf(w: IdentityFields): episodes.EpisodeIdentity | Refusal {
  const podcastGuid = guidField('podcast_guid', w.podcast_guid);
  if (isRefusal(podcastGuid)) return podcastGuid;
  const syncId = guidField('sync_id', w.sync_id);
  if (isRefusal(syncId)) return syncId;
  return { podcastGuid, podcastUrl: w.podcast_url, syncId, episodeGuid: w.episode_guid, enclosureUrl: w.enclosure_url };
}

/** A piece of state as sent, with its time read (the apps' zoneless times are UTC). */
function stampedField<T>(name: string, sent: { value: T; timestamp: string } | undefined) {
  if (sent === undefined) return undefined;
  const at = parseTimestamp(sent.timestamp, { zonelessIsUtc: true });
  return at ? { value: sent.value, at } : new Refusal(`Invalid ${name}.timestamp: expected an ISO 8601 date-time`);
}

/** A record as sent, as the domain takes it; or why not. */
function writeOf(w: Write): episodes.RecordWrite | Refusal {
  const identity = identityOf(w);
  if (isRefusal(identity)) return identity;
  const fav = w.favorite_status;
  if (fav && typeof fav.value !== 'boolean') return new Refusal('Invalid favorite_status.value: expected a boolean');
  const state = {
    position: stampedField('playback_position', w.playback_position),
    played: stampedField('played_status', w.played_status),
    isNew: stampedField('new_status', w.new_status),
    downloaded: stampedField('download_status', w.download_status),
    favourite: stampedField('favorite_status', fav as { value: boolean; timestamp: string } | undefined),
  };
  const refused = Object.values(state).find(isRefusal);
  if (refused) return refused;
  return { ...identity, ...(state as { [K in keyof typeof state]: Exclude<(typeof state)[K], Refusal> }) };
}

/** One success or failure entry per record sent, in order, with its temporary_id echoed. */
function presentOutcomes(body: Write[], outcomes: episodes.RecordOutcome[]): z.infer<typeof episodesResult> {
  const result: z.infer<typeof episodesResult> = { success: [], failure: [] };
  body.forEach((sent, i) => {
    const o = outcomes[i]!;
    const echo = { ...(sent.temporary_id !== undefined && { temporary_id: sent.temporary_id }) };
    if (!isRefusal(o)) {
      const podcast_guid = o.podcastGuid ?? podcastGuid(o.podcastUrl);
      result.success.push({ ...echo, sync_id: o.syncId, podcast_guid, enclosure_url: o.enclosureUrl });
      return;
    }
    result.failure.push({
      ...echo,
      ...(sent.sync_id !== undefined && { sync_id: sent.sync_id }),
      ...(sent.enclosure_url !== undefined && { enclosure_url: sent.enclosure_url }),
      message: o.reason,
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
        const found = await episodes.page(ctx.db, currentUser(req), {
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
        const outcomes = await episodes.save(ctx.db, currentUser(req), body.map(writeOf), limits);
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
