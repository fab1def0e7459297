// The subscription service, one seam for every door and the rooms above: what they may call, by name.
// Subscribing and unsubscribing (subscribe.ts), an app's upload of what it added and removed (changes.ts),
// reading (lists.ts), one record at a time (records.ts), what a feed said (feed-changes.ts), duplicates,
// and archives; and the URL and guid rules every room and door shares (urls.ts). The files behind it
// import each other, never this one; what is not named here (the record-level steps, plans and repos)
// stays inside the room.
export { archivedRecords, restoreRecords, subscribedAmong } from './archive';
export type { ArchivedRecord, RestoreResult } from './archive';
export { applyChanges } from './changes';
export type { AppliedChanges, StateChanges } from './changes';
export { findDuplicates, mergeRecords } from './duplicates';
export type { DuplicateGroup, DuplicateRecord } from './duplicates';
export { adoptFeedGuid, feedChanges, moveFeed, undoFeedMove } from './feed-changes';
export type { FeedApplied, FeedChange, FeedSource } from './feed-changes';
export {
  browse,
  changesSince,
  lastChange,
  listChanges,
  subscribedFeeds,
  subscriptionsChangedAt,
  urlsChangedBetween,
} from './lists';
export type { BrowsedRecord, FeedState } from './lists';
export {
  change,
  changeLocked,
  forgetAll,
  getRecord,
  liveRecordId,
  markDeleted,
  recordIdByUrlHash,
  recordsOfFeed,
  subscribesTo,
} from './records';
export type { Change, ChangeReport, FeedRecord } from './records';
export {
  checkFeed,
  isItem,
  matchAndWriteLocked,
  matchesAndRecordsOf,
  matchesOf,
  subscribe,
  subscribeAllNew,
  unsubscribe,
  writeMatchedLocked,
} from './subscribe';
export type { Written } from './subscribe';
export type { Item, Match } from './plan';
export type { AlsoWritten, Matches, NamedRecordRead } from './repo';
export type { FeedInput, Outcome, SubscriptionRecord } from './types';
export { MAX_URL_LENGTH, checkFeedUrl, parseGuid, podcastGuid, urlHash, urlHashOf } from './urls';
export { CURRENT_URL_HASH } from './record-repo';
export type { FeedUrlProblem, FeedUrlResult } from './urls';
