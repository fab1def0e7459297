// The sync endpoint's service (docs/opa-sync.md), one seam for its door: what it may call, by name.
// A batch of actions applied by last write wins (batch.ts), the reads of changes and subscriptions
// (reads.ts), the nightly forgetting of old action ids (retention.ts), and the shapes they take and give
// (types.ts). The files behind it import each other, never this one; the entities, the per-type rules and
// the repos stay inside the room.
export { MAX_BATCH, applyBatch, forgetActions } from './batch';
export { changes, subscription, subscriptionsPage } from './reads';
export { syncCleanupTasks } from './retention';
export type { ChangesPage, ChangesQuery } from './reads';
export type {
  Entity,
  EpisodeAction,
  EpisodeRef,
  Outcome,
  Stamped,
  SubscriptionAction,
  SyncAction,
  SyncSubscription,
} from './types';
