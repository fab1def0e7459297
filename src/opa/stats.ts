import { Router, type RequestHandler } from 'express';
import type { ApiContext } from '../api-context';
import { currentUser } from '../http/credentials';
import { route } from '../http/method';
import { error, json, type Documenter } from '../http/openapi';
import { z } from '../http/zod';
import * as stats from '../stats/service';
import { isDate } from '../stats/service';
import { authErrors, secured } from './auth';
import { BadRequest } from './errors';
import { parseQuery } from './validate';

// Listening statistics for apps, experimental (docs/stats.md): what the user heard on all devices.

const EXPERIMENTAL = "Experimental: castsync's own extension, whose shape may change.";

/** A date of the user's time zone, given at most once. */
const date = (name: string) =>
  z
    .string({ error: `Invalid ${name}: give it once, as a date YYYY-MM-DD` })
    .refine(isDate, { message: `Invalid ${name}: expected an ISO 8601 date YYYY-MM-DD` })
    .optional()
    .openapi({
      format: 'date',
      description: `${name === 'from' ? 'First' : 'Last'} day, included (the user's time zone)`,
    });

export const statsQuery = z.object({ from: date('from'), to: date('to') });

const seconds = z.number().int().min(0).openapi({ description: 'Seconds listened' });
export const statsResponse = z
  .object({
    listened_seconds: seconds,
    episodes_finished: z.number().int().min(0),
    by_podcast: z.array(
      z.object({
        podcast_url: z.string(),
        podcast_guid: z.string().openapi({ format: 'uuid' }),
        title: z.string().optional().openapi({ description: "The feed's title, once the server fetched it" }),
        listened_seconds: seconds,
      }),
    ),
    by_device: z.array(
      z.object({
        device: z.string().optional().openapi({ description: 'The device id; absent for apps that name none' }),
        listened_seconds: seconds,
      }),
    ),
    by_day: z.array(
      z.object({ date: z.string().openapi({ format: 'date' }), listened_seconds: seconds }).openapi({
        description: 'Only the days with listening, in order',
      }),
    ),
  })
  .openapi('Stats', { description: EXPERIMENTAL });

function present(s: stats.Summary): z.infer<typeof statsResponse> {
  return {
    listened_seconds: s.listenedSeconds,
    episodes_finished: s.episodesFinished,
    by_podcast: s.byPodcast.map((p) => ({
      podcast_url: p.podcastUrl,
      podcast_guid: p.podcastGuid,
      ...(p.title !== null && { title: p.title }),
      listened_seconds: p.seconds,
    })),
    by_device: s.byDevice.map((d) => ({ ...(d.device !== null && { device: d.device }), listened_seconds: d.seconds })),
    by_day: s.byDay.map((d) => ({ date: d.date, listened_seconds: d.seconds })),
  };
}

export function statsRoutes(ctx: ApiContext, user: RequestHandler): Router {
  const r = Router();
  route(
    r,
    '/stats',
    {
      get: async (req, res) => {
        const q = parseQuery(statsQuery, req.query);
        if (q.from && q.to && q.from > q.to) throw new BadRequest('Invalid from: after to');
        res.json(present(await stats.summary(ctx.db, currentUser(req), q)));
      },
    },
    [user],
  );
  return r;
}

export const documentStats: Documenter = (r) => {
  r.registerPath({
    method: 'get',
    path: '/v1/stats',
    summary: 'Listening statistics (experimental)',
    description:
      `${EXPERIMENTAL} Time listened from the play actions of all the user's devices, a part of an episode ` +
      "heard again counted once, on the day it was first heard; days of the user's time zone (UTC unless set " +
      'on the web page). Without from or to, all of the history.',
    security: secured,
    request: { query: statsQuery },
    responses: {
      200: json(statsResponse, 'The statistics of the range'),
      400: error('A bad from or to'),
      ...authErrors,
    },
  });
};
