// What the notifications keep, and for how long (docs/notifications.md).

/**
 * The retention, in days. An item dated longer ago than this is not announced when a fetch finds it (a
 * feed that lists an old episode again, or for the first time, has no new episode), so the event of an
 * item that old is no longer what stops it from being announced twice.
 */
export const RETENTION_DAYS = 30;
