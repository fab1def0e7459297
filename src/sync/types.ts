import type { EpisodeState } from '../episodes/service';
// The sync endpoint's actions and what became of them (docs/opa-sync.md), as the domain takes them: the
// door has checked their shape, ids and times.

/** A subscription as the sync endpoint shows it. */
export type SyncSubscription = {
  syncId: string;
  guid: string;
  feedUrl: string;
  subscribedAt: Date;
  /** Set while the record is not subscribed (unsubscribed or deleted). */
  unsubscribedAt?: Date;
  /** Whether the record was deleted (through /v1's DELETE), not only unsubscribed. */
  deleted: boolean;
  /** What last-write-wins compares: the app's time of the latest change through a sync action, else the server's. */
  lastUpdated: Date;
  /** The server's change stamp of the record's latest change: what `since` compares. */
  changed: Date;
};

type ActionBase = { actionId: string; occurredAt: Date };

export type SubscriptionAction = ActionBase & { type: 'subscription' } & (
    | { action: 'subscribe'; feedUrl: string; guid?: string | undefined }
    | { action: 'unsubscribe'; syncId: string }
    | { action: 'update'; syncId: string; feedUrl?: string | undefined; guid?: string | undefined }
  );

/** An episode named as the episode records name it: its sync id, or its podcast and enclosure URL. */
export type EpisodeRef = {
  syncId?: string | undefined;
  podcastGuid?: string | undefined;
  podcastUrl?: string | undefined;
  enclosureUrl?: string | undefined;
  episodeGuid?: string | undefined;
};

export type EpisodeAction = ActionBase & { type: 'episode'; episode: EpisodeRef } & (
    | { action: 'create' | 'played' | 'unplayed' }
    | { action: 'position'; position: number }
    | { action: 'favourite'; favourite: boolean }
  );

export type SyncAction = SubscriptionAction | EpisodeAction;

export type { Stamped } from '../episodes/service';

export type Entity =
  { type: 'subscription'; subscription: SyncSubscription } | { type: 'episode'; episode: EpisodeState };

/** What an action names: the entity whose state its result shows. */
export type Ref = { type: 'subscription' | 'episode'; syncId: string };

/** What an action's rules decided. */
export type Decision =
  { status: 'applied' | 'ignored'; ref: Ref } | { status: 'rejected'; reason: string; ref?: Ref | undefined };

/** What became of an action: the decision, and the entity's state once the batch is done. */
export type Outcome = ({ status: 'applied' | 'ignored' } | { status: 'rejected'; reason: string }) & {
  entity?: Entity | undefined;
};
