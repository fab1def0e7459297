import { lockUser } from '../db/change-stamp';
import { withTransaction, type Db, type Queryable } from '../db/pool';
import { readStates } from '../episodes/service';
import { subscriptionOf } from './entities';
import { episodeAction } from './episodes';
import { subscribeNewFeeds } from './new-subscribes';
import * as repo from './repo';
import { BatchSubscribes } from './subscribe-reads';
import { subscriptionAction, subscribeItems } from './subscriptions';
import type { Decision, Entity, Outcome, Ref, SyncAction } from './types';

// The sync endpoint's batch (docs/opa-sync.md): actions applied in the order of their times, each action
// once by its id.

/** Actions in one batch at most (the draft's limit). */
export const MAX_BATCH = 30;

const key = (r: Ref) => `${r.type}:${r.syncId}`;

/**
 * The entities these refs name, as they are now (in the batch's transaction: once it is done); the records
 * in `known` (by sync id, as they are now) are not read again.
 */
export async function entitiesOf(
  db: Queryable,
  userId: number,
  refs: Ref[],
  known: ReadonlyMap<string, repo.EntityRow> = new Map(),
): Promise<Map<string, Entity>> {
  const ids = (type: Ref['type']) => [...new Set(refs.filter((r) => r.type === type).map((r) => r.syncId))];
  const unknown = ids('subscription').filter((id) => !known.has(id));
  const read = unknown.length > 0 ? await repo.bySyncIds(db, userId, unknown) : [];
  const subscriptions = [...read, ...ids('subscription').flatMap((id) => known.get(id) ?? [])];
  const episodes = await readStates(db, userId, ids('episode'));
  const out = new Map<string, Entity>();
  for (const row of subscriptions)
    out.set(key({ type: 'subscription', syncId: row.sync_id }), {
      type: 'subscription',
      subscription: subscriptionOf(row),
    });
  for (const [syncId, episode] of episodes) out.set(key({ type: 'episode', syncId }), { type: 'episode', episode });
  return out;
}

const replayOf = (s: repo.StoredAction): Decision => ({
  status: s.status as 'applied' | 'ignored',
  ref: { type: s.type as Ref['type'], syncId: s.entity_id },
});

const isSubscribe = (a: SyncAction) => a.type === 'subscription' && a.action === 'subscribe';

/**
 * Decides and applies each action, in the order of their times (the order in the batch breaks ties), and
 * keeps what became of them; an action id already applied or ignored (in an earlier batch or earlier in
 * this one) is answered as it was. Subscribes are written together (BatchSubscribes) until another kind of
 * write comes, which they are written before.
 */
async function decide(
  tx: Queryable,
  userId: number,
  clientId: string | null,
  actions: SyncAction[],
  limits: { maxFavourites: number },
): Promise<{ decisions: Decision[]; records: ReadonlyMap<string, repo.EntityRow> }> {
  const stored = await repo.storedActions(
    tx,
    userId,
    actions.map((a) => a.actionId),
  );
  const earlier = new Map<string, Decision>(stored.map((s) => [s.action_id, replayOf(s)]));
  const order = actions
    .map((a, i) => ({ a, i }))
    .sort((x, y) => x.a.occurredAt.getTime() - y.a.occurredAt.getTime() || x.i - y.i);
  const subscribes = new BatchSubscribes(tx, userId, clientId);
  await subscribes.readAhead(subscribeItems(actions.filter((a) => !earlier.has(a.actionId))));
  const decisions = new Array<Decision>(actions.length);
  const kept: { a: SyncAction; d: Decision & { status: 'applied' | 'ignored' } }[] = [];
  for (const { a, i } of order) {
    const before = earlier.get(a.actionId);
    if (before) {
      decisions[i] = before;
      continue;
    }
    if (!isSubscribe(a)) await subscribes.flush();
    const c = { tx, userId, clientId: clientId ?? undefined, maxFavourites: limits.maxFavourites, subscribes };
    const d = a.type === 'subscription' ? await subscriptionAction(c, a) : await episodeAction(c, a);
    decisions[i] = d;
    if (d.status === 'rejected') continue;
    if (d.status === 'applied' && !isSubscribe(a)) subscribes.changed();
    earlier.set(a.actionId, d);
    kept.push({ a, d });
  }
  await subscribes.flush();
  const rows = kept.map(({ a, d }) => ({
    action_id: a.actionId,
    type: a.type,
    action: a.action,
    status: d.status,
    entity_id: d.ref.syncId,
  }));
  await repo.storeActions(tx, userId, rows);
  return { decisions, records: subscribes.records() };
}

/**
 * Forgets the action ids kept of the user, when what they applied is forgotten (start over): an app that
 * sends one of them again has it judged again, not answered as applied to a record that is no more.
 */
export const forgetActions = (tx: Queryable, userId: number): Promise<void> => repo.deleteAllActions(tx, userId);

/**
 * Applies a batch in one transaction under the user's lock, in the order of the actions' times (the order
 * in the batch breaks ties). An action id already applied or ignored (in an earlier batch or earlier in
 * this one) is answered as it was and not applied again. Outcomes come in the batch's order, each with
 * its entity's state once the batch is done. A batch of subscribes of new feeds is written in one
 * statement (new-subscribes.ts).
 */
export async function applyBatch(
  db: Db,
  userId: number,
  clientId: string | undefined,
  actions: SyncAction[],
  limits: { maxFavourites: number },
): Promise<Outcome[]> {
  const allNew = await subscribeNewFeeds(db, userId, clientId ?? null, actions);
  if (allNew) return allNew;
  return withTransaction(db, async (tx) => {
    await lockUser(tx, userId);
    const { decisions, records } = await decide(tx, userId, clientId ?? null, actions, limits);
    const now = await entitiesOf(
      tx,
      userId,
      decisions.flatMap((d) => (d.ref ? [d.ref] : [])),
      records,
    );
    return decisions.map((d) => {
      const entity = d.ref && now.get(key(d.ref));
      return d.status === 'rejected' ? { status: d.status, reason: d.reason, entity } : { status: d.status, entity };
    });
  });
}
