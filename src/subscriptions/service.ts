// The subscription service, one seam for every door: subscribing and unsubscribing (subscribe.ts), an app's
// upload of what it added and removed (changes.ts), reading (lists.ts), one record at a time (records.ts).
// The files behind it import each other, never this one.
export * from './archive';
export * from './changes';
export * from './duplicates';
export * from './feed-changes';
export * from './lists';
export * from './records';
export * from './subscribe';
export * from './types';
