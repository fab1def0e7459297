import type { Request, Response, Router } from 'express';
import type { ApiContext } from '../../api-context';
import * as episodes from '../../episodes/service';
import { currentUser } from '../../http/credentials';
import { route } from '../../http/method';
import * as subscriptions from '../../subscriptions/service';
import { again } from '../errors';
import { duration, when } from '../format';
import { render, type Notice } from '../views';
import { idOf } from './item';

/** Where the feed fetcher read what it changed, in words. */
const sourceOf = (source: string): string =>
  ({
    redirect: "the feed's address answers with a permanent redirect (301 or 308)",
    'itunes:new-feed-url': 'the feed declares itunes:new-feed-url',
    'podcast:newFeedUrl': 'the feed declares podcast:newFeedUrl',
    'podcast:guid': 'the feed declares podcast:guid',
  })[source] ?? source;

/** The Activity page: recent plays and the feed moves the fetcher made, each move undoable. */
export function activityRoutes(r: Router, ctx: ApiContext): void {
  const activityPage = async (req: Request, res: Response, notices: Notice[] = []) => {
    const userId = currentUser(req);
    const [plays, feedChanges] = await Promise.all([
      episodes.recentPlays(ctx.db, userId, 50),
      subscriptions.feedChanges(ctx.db, userId, 50),
    ]);
    render(res, 'activity', { title: 'Activity', notices, plays, feedChanges, sourceOf, when, duration });
  };
  route(r, '/web/activity', { get: (req, res) => activityPage(req, res) });
  route(r, '/web/feed-changes/:id/undo', {
    post: [
      again((req, res, notice) => activityPage(req, res, [notice])),
      async (req, res) => {
        await subscriptions.undoFeedMove(ctx.db, currentUser(req), idOf(req));
        await activityPage(req, res, [
          {
            kind: 'ok',
            text: 'The move was undone: the subscription is at its old URL again, and your apps are told.',
          },
        ]);
      },
    ],
  });
}
