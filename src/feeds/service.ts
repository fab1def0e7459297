// The feeds service, one seam for every door and the rooms above: what they may call, by name.
// What the fetcher learnt of each feed (catalog.ts), its chapters and transcripts (documents.ts), artwork
// thumbnails for the web page (artwork.ts), the fetcher and its tasks (fetcher.ts), its metrics
// (metrics.ts), the address policy every outgoing request keeps to (address-policy.ts), and the HTTP client and feed parser that the directory and the imports reach other
// servers with (fetch.ts, parse.ts). The files behind it import each other, never this one; what is not
// named here (the repos, the discovery of new feeds, chapter and transcript formats) stays inside the room.
export type { AddressPolicy } from './address-policy';
export { countDue, describe } from './catalog';
export type { FeedInfo } from './catalog';
export { chaptersOf, declaredOf, transcriptOf } from './documents';
export type { Chapters, Transcript } from './documents';
export { FetchFailed, checkTarget, failure, fetchFeed, readBody, send } from './fetch';
export type { FetchLimits } from './fetch';
export { feedTasks, fetcherSettings } from './fetcher';
export type { FetcherSettings, NewItemsHook } from './fetcher';
export type { NewItem } from './repo';
export { feedRegistry } from './metrics';
export { FeedParseError, parseFeed } from './parse';
export { xmlReferences } from './notes';
export type { FeedItem } from './parse';
export { thumbnail } from './artwork';
