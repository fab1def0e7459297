import * as episodes from '../../episodes/service';
import type { ApiContext } from '../../api-context';
import * as queue from '../../queue/service';

// What the pages that show episodes need of Up next and favourites: the marks on each episode's buttons,
// and where the player goes on to.

/** An episode shown in a list: what the buttons need to know of it (its favourite is in its one state). */
type Shown = { id: string; state: episodes.EpisodeState | undefined };

/** Which of the shown episodes (by item id) are favourites and which are in Up next. */
export async function marksOf(ctx: ApiContext, userId: number, shown: Shown[]) {
  const q = await queue.read(ctx.db, userId);
  const queued = new Set(q.items.map((i) => i.itemId));
  return {
    favourite: new Set(shown.filter((e) => e.state?.favourite?.value === true).map((e) => e.id)),
    queued: new Set(shown.filter((e) => queued.has(e.id)).map((e) => e.id)),
    queue: q.items,
  };
}

/**
 * What the player goes on to when an episode ends: the item after it in Up next, else (an episode not on
 * the list) the first; only episodes a feed lists (the player needs their page).
 */
export function nextInQueue(items: queue.QueueItem[], itemId: string): queue.QueueItem | undefined {
  const playable = items.filter((i) => i.itemId !== null);
  const at = playable.findIndex((i) => i.itemId === itemId);
  return at === -1 ? playable[0] : playable[at + 1];
}

/** The lock screen's "previous": the item before the episode in Up next, if it is on the list and not first. */
export function previousInQueue(items: queue.QueueItem[], itemId: string): queue.QueueItem | undefined {
  const playable = items.filter((i) => i.itemId !== null);
  const at = playable.findIndex((i) => i.itemId === itemId);
  return at > 0 ? playable[at - 1] : undefined;
}
