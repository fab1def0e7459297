import { lockUser } from '../db/change-stamp';
import { withTransaction, type Db, type Queryable } from '../db/pool';
import { subscriptionOf } from './entities';
import { episodeAction } from './episodes';
import * as repo from './repo';
import { subscriptionAction } from './subscriptions';
import type { Entity, Outcome, SyncAction } from './types';

// The sync endpoint's service (docs/opa-sync.md): a batch of actions applied in the order of their times,
// each action once by its id; the user's changes read in the order of their change stamps.

export * from './reads';
export type * from './types';

/** Actions in one batch at most (the draft's limit). */
export const MAX_BATCH = 30;

function outcomeOf(stored: repo.StoredAction, entities: Map<string, Entity>): Outcome {
  const entity = stored.entity_id === null ? undefined : entities.get(stored.entity_id);
  return { status: stored.status as 'applied' | 'ignored', entity };
}

const entityId = (o: Outcome): string | undefined =>
  o.entity?.type === 'subscription' ? o.entity.subscription.syncId : o.entity?.episode.syncId;

/** Each subscription's state once the batch is done: what every answer shows, its own action's or not. */
async function currentSubscriptions(tx: Queryable, userId: number, outcomes: Outcome[], replayed: repo.StoredAction[]) {
  const ids = new Set(outcomes.flatMap((o) => (o.entity?.type === 'subscription' ? [entityId(o)!] : [])));
  for (const s of replayed) if (s.type === 'subscription' && s.entity_id) ids.add(s.entity_id);
  const rows = await repo.bySyncIds(tx, userId, [...ids]);
  return new Map<string, Entity>(
    rows.map((r) => [r.sync_id, { type: 'subscription', subscription: subscriptionOf(r) }]),
  );
}

/**
 * Applies a batch in one transaction under the user's lock, in the order of the actions' times (the order
 * in the batch breaks ties). An action id already applied or ignored (in an earlier batch or earlier in
 * this one) is answered as it was and not applied again. Outcomes come in the batch's order.
 */
export async function applyBatch(
  db: Db,
  userId: number,
  clientId: string | undefined,
  actions: SyncAction[],
): Promise<Outcome[]> {
  return withTransaction(db, async (tx) => {
    await lockUser(tx, userId);
    const earlier = new Map(
      (
        await repo.storedActions(
          tx,
          userId,
          actions.map((a) => a.actionId),
        )
      ).map((s) => [s.action_id, s]),
    );
    const order = actions
      .map((a, i) => ({ a, i }))
      .sort((x, y) => x.a.occurredAt.getTime() - y.a.occurredAt.getTime() || x.i - y.i);
    const outcomes: Outcome[] = new Array<Outcome>(actions.length);
    const replayed: { i: number; stored: repo.StoredAction }[] = [];
    const kept: repo.StoredAction[] = [];
    for (const { a, i } of order) {
      const stored = earlier.get(a.actionId);
      if (stored) {
        replayed.push({ i, stored });
        continue;
      }
      const c = { tx, userId, clientId };
      const o = a.type === 'subscription' ? await subscriptionAction(c, a) : await episodeAction(c, a);
      outcomes[i] = o;
      if (o.status === 'rejected') continue;
      const s = {
        action_id: a.actionId,
        type: a.type,
        action: a.action,
        status: o.status,
        entity_id: entityId(o) ?? null,
      };
      earlier.set(a.actionId, s);
      kept.push(s);
    }
    await repo.storeActions(tx, userId, kept);
    const now = await currentSubscriptions(
      tx,
      userId,
      outcomes.filter(Boolean),
      replayed.map((r) => r.stored),
    );
    for (const { i, stored } of replayed) outcomes[i] = outcomeOf(stored, now);
    return outcomes.map((o) => {
      const id = entityId(o);
      return o.entity?.type === 'subscription' && id !== undefined ? { ...o, entity: now.get(id) } : o;
    });
  });
}
