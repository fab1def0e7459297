import * as episodes from '../../episodes/service';
import type { Request, Router } from 'express';
import type { ApiContext } from '../../api-context';
import { currentUser } from '../../http/credentials';
import { route } from '../../http/method';
import { parseTimestamp } from '../../timestamps';
import { PageError } from '../errors';
import { formField } from '../session';

/** A whole number of seconds from a form field; undefined when absent or empty, refused when not one. */
function seconds(req: Request, name: string): number | undefined {
  const v = formField(req, name);
  if (v === undefined || v === '') return undefined;
  if (!/^\d{1,9}$/.test(v)) throw new PageError(400, `${name}: a whole number of seconds`);
  return Number(v);
}

/** The player's writes (fetch, or sendBeacon when the page is left): 204, nothing to show. */
export function playerRoutes(r: Router, ctx: ApiContext): void {
  route(r, '/web/episodes/:id/position', {
    post: async (req, res) => {
      const position = seconds(req, 'position');
      if (position === undefined) throw new PageError(400, 'position: a whole number of seconds');
      const total = seconds(req, 'total');
      const sentAt = formField(req, 'at');
      const when = sentAt ? parseTimestamp(sentAt) : undefined;
      if (sentAt && !when) throw new PageError(400, 'at: an ISO 8601 time with its zone');
      await episodes.savePosition(ctx.db, currentUser(req), String(req.params.id), {
        started: seconds(req, 'started'),
        position,
        total: total === 0 ? undefined : total,
        when,
      });
      res.status(204).end();
    },
  });
  // The player's speed for the podcast (fetch from player.js): 204.
  route(r, '/web/episodes/:id/speed', {
    post: async (req, res) => {
      const speed = Number(formField(req, 'speed'));
      await episodes.setSpeed(ctx.db, currentUser(req), String(req.params.id), speed);
      res.status(204).end();
    },
  });
}
