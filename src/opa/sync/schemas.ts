import { errorBody } from '../../http/openapi';
import { z } from '../../http/zod';

// The shapes of /api/v1/sync and /api/v1/subscriptions (experimental: the Open Podcast API's sync draft),
// for the OpenAPI document. Actions are read one by one by parse.ts, so that a bad one rejects only itself.

export const EXPERIMENTAL =
  "Experimental: the Open Podcast API's sync draft (api-specs pull request #171), which may change with the draft; docs/opa-sync.md.";

const time = (description: string) =>
  z.string().openapi({ format: 'date-time', example: '2026-07-11T15:30:00.100Z', description });
const uuid = (description: string) => z.string().openapi({ format: 'uuid', description });

export const syncSubscription = z
  .object({
    sync_id: uuid('The id this server gives the subscription'),
    guid: uuid("The podcast's guid"),
    feed_url: z.string(),
    subscribed_at: time(
      "When the user last subscribed (the app's time, or the server's for a change through another API)",
    ),
    unsubscribed_at: time('When the user unsubscribed; absent while subscribed').optional(),
  })
  .openapi('SyncSubscription');

const stamped = <T extends z.ZodType>(value: T, description: string) =>
  z.object({ value, timestamp: time("The app's time it took that value") }).openapi({ description });

export const syncEpisode = z
  .object({
    sync_id: uuid("The episode's id (as /v1/episodes names it)"),
    podcast_guid: uuid("The podcast's guid, when the user's subscription has it").optional(),
    podcast_url: z.string(),
    enclosure_url: z.string(),
    playback_position: stamped(z.number().int().min(0), 'Seconds into the episode, at the latest play').optional(),
    played_status: stamped(z.boolean(), 'Played to the end (or marked so), not since marked unplayed'),
    favorite_status: stamped(z.boolean(), "The user's favourite, set or cleared (as /v1/episodes shows it)").optional(),
  })
  .openapi('SyncEpisode');

export const syncAction = z
  .object({
    type: z.string().openapi({ example: 'subscription', description: '`subscription` or `episode`' }),
    action: z.string().openapi({
      example: 'subscribe',
      description:
        'subscription: subscribe, unsubscribe, update; episode: create, played, unplayed, position, favourite',
    }),
    action_id: uuid('Made by the app, kept when the action is sent again'),
    occurred_at: time('When the action happened on the app (UTC, any fraction)'),
    data: z.record(z.string(), z.unknown()),
  })
  .openapi('SyncAction');

export const syncRequest = z.object({ requests: z.array(syncAction).max(30) }).openapi('SyncRequest');

const entity = z.union([syncSubscription, syncEpisode]);

export const syncResult = z
  .object({
    type: z.string().optional(),
    action: z.string().optional(),
    action_id: z.string().optional(),
    status: z.enum(['applied', 'ignored', 'rejected']),
    reason: z.string().optional().openapi({ description: 'Why the action was rejected' }),
    data: entity.optional().openapi({ description: "The entity's current state" }),
    entity: entity.optional().openapi({ description: 'The same as `data` (the draft names it both ways)' }),
  })
  .openapi('SyncResult');

export const syncResponse = z.object({ results: z.array(syncResult) }).openapi('SyncResponse');

const paging = {
  has_more: z.boolean().openapi({ description: 'Whether another page follows now' }),
  has_next: z.boolean().openapi({ description: 'The same as `has_more` (the draft names it both ways)' }),
};

export const syncChange = z
  .object({
    type: z.enum(['subscription', 'episode']),
    action: z.enum(['create', 'update', 'delete']).openapi({
      description:
        'create: every result of a read without `since`; then update, or delete for a subscription deleted through /v1',
    }),
    action_id: uuid('The id of this change: the same each time it is read, a new one for the next change'),
    occurred_at: time("The app's time of the latest change, or the server's for a change through another door"),
    last_updated: time("The server's time of the change: what `since` compares"),
    data: entity,
  })
  .openapi('SyncChange');

export const syncError = errorBody
  .extend({
    error: z.string().openapi({ description: 'The name of the HTTP status', example: 'Unauthorized' }),
    description: z.string().openapi({ description: 'The same as `message` (the draft names it so)' }),
  })
  .openapi('SyncError');

export const syncPage = z
  .object({
    results: z.array(syncChange),
    ...paging,
    next_since: z
      .string()
      .openapi({ format: 'uri', description: 'Where to ask next: now if has_more, later otherwise' }),
    previous_since: z
      .string()
      .optional()
      .openapi({ format: 'uri', description: 'A page that ends where this one starts (with `since` only)' }),
  })
  .openapi('SyncPage');

export const subscriptionsPage = z
  .object({
    results: z.array(syncSubscription),
    ...paging,
    next_since: z.string().optional().openapi({ format: 'uri' }),
  })
  .openapi('SyncSubscriptionPage');

const flag = (name: string) =>
  z
    .string()
    .optional()
    .openapi({ description: `true or false (also 1 or 0); default false`, example: 'false', param: { name } });

export const syncQuery = z.object({
  since: z
    .string()
    .optional()
    .openapi({ format: 'date-time', description: 'Only changes the server stamped after this' }),
  limit: z.string().optional().openapi({ description: 'Changes per page, 1-500 (default 50; larger is clamped)' }),
  include: z.string().optional().openapi({
    description: 'Comma-separated: all (default), subscription(s), episode(s)',
    example: 'subscriptions',
  }),
  include_own: flag('include_own'),
});

export const subscriptionsQuery = z.object({
  since: z.string().optional().openapi({ description: 'The cursor of a next_since link' }),
  limit: z.string().optional().openapi({ description: 'Subscriptions per page, 1-500 (default 30)' }),
  include_unsubscribed: flag('include_unsubscribed'),
});

export const syncIdParams = z.object({ sync_id: uuid("The subscription's sync_id") });

export const clientHeaders = z.object({
  'client-id': z.string().optional().openapi({
    format: 'uuid',
    description: "The app install's id: its own changes are left out of GET /api/v1/sync unless include_own",
  }),
});
