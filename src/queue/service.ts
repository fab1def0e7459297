// The Up next service, one seam for every door and the rooms above: what they may call, by name.
// One ordered list of episodes per user (up-next.ts, docs/queue.md). The files behind it import each other,
// never this one.
export { add, append, clear, itemsOfPodcast, move, read, remove, replace } from './up-next';
export type { Limits, Place, Queue, QueueItem, Stale } from './up-next';
