import * as episodes from '../../episodes/service';
import type { Request } from 'express';
import type { ApiContext } from '../../api-context';
import { currentUser } from '../../http/credentials';
import { PageError } from '../errors';
import { formField } from '../session';

// What the forms of Up next and favourites share.

/** Back to where a form was posted from (a page of the web page's episodes, Up next or Favourites). */
export const backTo = (req: Request, fallback: string): string => {
  const back = formField(req, 'back');
  return back &&
    /^\/web\/(subscriptions(\/[^/]+\/episodes)?|episodes\/\d+|in-progress|new|queue|favourites)(\?|$)/.test(back)
    ? back
    : fallback;
};

/** The feed episode of the path, as the queue and the favourites name it. */
export async function named(ctx: ApiContext, req: Request) {
  const e = await episodes.episode(ctx.db, currentUser(req), String(req.params.id));
  if (e.enclosureUrl === null) throw new PageError(400, 'The feed gives no audio for this episode.');
  return { podcastUrl: e.feedUrl, enclosureUrl: e.enclosureUrl, episodeGuid: e.guid };
}
