import type { FeedUrlProblem } from './urls';

/** A feed to subscribe to, as a client names it. */
export type FeedInput = { url: string; guid?: string | undefined };

/** What became of one feed of a subscribe call. */
export type Outcome =
  { ok: true; url: string; guid: string } | { ok: false; url: string; reason: FeedUrlProblem | 'Invalid guid' };

/** A record as a client sees it, named by the guid it was asked for (or had at `since`). */
export type SubscriptionRecord = {
  feedUrl: string;
  /** The guid the record is shown under: asked for, or the one it had at `since`. */
  guid: string;
  /** The newest guid of the record's chain. */
  currentGuid: string;
  isSubscribed: boolean;
  subscriptionChanged: Date;
  guidChanged: Date | null;
  deleted: Date | null;
};
