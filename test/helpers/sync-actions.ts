import { randomUUID } from 'node:crypto';

// The sync draft's subscription actions (`POST /api/v1/sync`), each with a new action id, at the app's time `at`.

export const sub = (feedUrl: string, at: string, extra: Record<string, unknown> = {}) => ({
  type: 'subscription',
  action: 'subscribe',
  action_id: randomUUID(),
  occurred_at: at,
  data: { feed_url: feedUrl, ...extra },
});
export const unsub = (syncId: string, at: string) => ({
  type: 'subscription',
  action: 'unsubscribe',
  action_id: randomUUID(),
  occurred_at: at,
  data: { sync_id: syncId },
});
export const update = (syncId: string, at: string, data: Record<string, unknown>) => ({
  type: 'subscription',
  action: 'update',
  action_id: randomUUID(),
  occurred_at: at,
  data: { sync_id: syncId, ...data },
});
