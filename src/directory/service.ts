// The directory service, one seam for every door and the rooms above: what they may call, by name.
// Searching a podcast directory (search.ts), a feed's preview before subscribing (preview.ts), this server's
// toplist (toplist.ts) and the searches' metrics (metrics.ts). The files behind it import each other, never
// this one; the providers and the toplist's repo stay inside the room.
export { directoryRegistry } from './metrics';
export { preview } from './preview';
export type { Preview, PreviewOutcome } from './preview';
export { MAX_RESULTS, directorySettings, search } from './search';
export type { DirectorySettings, Found, SearchOutcome } from './search';
export { MAX_TOPLIST, toplist } from './toplist';
export type { Popular } from './toplist';
