import type { Request, Router } from 'express';
import type { ApiContext } from '../../api-context';
import { currentUser } from '../../http/credentials';
import { route } from '../../http/method';
import * as queue from '../../queue/service';
import { PageError } from '../errors';
import { formField } from '../session';
import { backTo } from './forms';

/** An item id of the list from the path. */
function itemId(req: Request): string {
  const id = String(req.params.id);
  if (!/^[1-9]\d{0,17}$/.test(id)) throw new PageError(404, 'There is no such episode in Up next.');
  return id;
}

/** Up next's buttons: clear the list, move an item, take items off. */
export function editRoutes(r: Router, ctx: ApiContext): void {
  route(r, '/web/queue/clear', {
    post: async (req, res) => {
      await queue.clear(ctx.db, currentUser(req));
      res.redirect(303, '/web/queue');
    },
  });
  route(r, '/web/queue/:id/move', {
    post: async (req, res) => {
      const at = Number(formField(req, 'at'));
      if (!Number.isInteger(at) || at < 0) throw new PageError(400, 'at: a position, 0 the top');
      await queue.move(ctx.db, currentUser(req), itemId(req), at);
      // A drag posts with fetch and reloads the page itself.
      if (formField(req, 'script') === '1') return void res.status(204).end();
      res.redirect(303, backTo(req, '/web/queue'));
    },
  });
  route(r, '/web/queue/:id/remove', {
    post: async (req, res) => {
      await queue.remove(ctx.db, currentUser(req), [itemId(req)]);
      res.redirect(303, backTo(req, '/web/queue'));
    },
  });
  // The answer to "take its episodes off Up next too?" when a subscription is removed.
  route(r, '/web/queue/remove', {
    post: async (req, res) => {
      const ids = (formField(req, 'ids') ?? '').split(',').filter((id) => /^[1-9]\d{0,17}$/.test(id));
      if (ids.length > 0) await queue.remove(ctx.db, currentUser(req), ids).catch(() => undefined);
      res.redirect(303, backTo(req, '/web/subscriptions'));
    },
  });
}
