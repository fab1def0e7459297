// The subscription service, one seam for every door: subscribing and unsubscribing (subscribe.ts), reading
// (lists.ts), one record at a time (records.ts). The files behind it import each other, never this one.
export * from './lists';
export * from './records';
export * from './subscribe';
export * from './types';
