import type { Router } from 'express';
import type { ApiContext } from '../../api-context';
import { currentUser } from '../../http/credentials';
import { route } from '../../http/method';
import * as queue from '../../queue/service';
import { PageError } from '../errors';
import { formField } from '../session';
import { backTo, named } from './forms';

/** A domain refusal (a full list, an episode that cannot be named) as the page's 400. */
async function refusing<T>(work: Promise<T>): Promise<T> {
  return work.catch((err: unknown) => {
    const reason = (err as { reason?: unknown }).reason;
    throw typeof reason === 'string' ? new PageError(400, reason) : err;
  });
}

/** Play next and Add to queue, on every episode. */
export function addRoutes(r: Router, ctx: ApiContext): void {
  const limits = { maxItems: ctx.config.queueMaxItems };
  route(r, '/web/episodes/:id/queue', {
    post: async (req, res) => {
      const place = formField(req, 'at') === 'next' ? 'next' : 'end';
      await refusing(queue.add(ctx.db, currentUser(req), await named(ctx, req), place, limits));
      res.redirect(303, backTo(req, '/web/queue'));
    },
  });
}
