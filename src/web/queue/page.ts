import type { Request, Response, Router } from 'express';
import type { ApiContext } from '../../api-context';
import { currentUser } from '../../http/credentials';
import { route } from '../../http/method';
import * as queue from '../../queue/service';
import { duration, when } from '../format';
import { render } from '../views';

function queuePage(ctx: ApiContext) {
  return async (req: Request, res: Response) => {
    const q = await queue.read(ctx.db, currentUser(req));
    render(res, 'queue', {
      title: 'Up next',
      section: 'queue',
      items: q.items,
      back: '/web/queue',
      scripts: ['/static/queue.js'],
      when,
      duration,
    });
  };
}

/** The Up next page: the list in order, with its buttons (reordered with them without script, dragged with it). */
export function pageRoutes(r: Router, ctx: ApiContext): void {
  route(r, '/web/queue', { get: queuePage(ctx) });
}
