// The notifications service, one seam for every door and the composition root: what they may call, by name.
// New-episode events noted in the fetcher's transaction (events.ts), their delivery job and "Send a test"
// (deliver.ts), each person's settings and muted feeds (settings.ts), Web Push's VAPID key and browsers
// (push.ts), the nightly removal of old events and deliveries (retention.ts). The files behind it import
// each other, never this one; the repos, the channels and the messages stay inside the room.
// docs/notifications.md.
export { deliverDue, deliverySettings, notificationTasks, sendTest } from './deliver';
export type { DeliverySettings, TestOutcome } from './deliver';
export { DELIVER_TASK, newItemsHook, noteNewItems } from './events';
export { MAX_BROWSERS, addBrowser, browserCount, removeBrowser, removeSessionBrowsers, vapidPublicKey } from './push';
export { notificationCleanupTasks } from './retention';
export type { BrowserSubscription } from './push';
export {
  HOOK_KINDS,
  MAX_HOOK_URL_LENGTH,
  feedsOff,
  notificationSettings,
  setFeedNotifications,
  setNotificationSettings,
} from './settings';
export type { HookKind, NotificationSettings } from './settings';
