import { z } from '../http/zod';

export const MAX_ITEMS = 1000;
export const MAX_PER_PAGE = 500;
export const DEFAULT_PER_PAGE = 50;

const dateTime = z.string().openapi({ format: 'date-time', example: '2026-11-22T10:15:30.123Z' });
const uuid = z.string().openapi({ format: 'uuid', example: '2d8bb39b-8d34-48d4-b223-a0d01eb27d71' });

export const postBody = z
  .object({
    subscriptions: z.array(
      z.object({
        feed_url: z.string().openapi({ format: 'uri', example: 'https://example.com/rss1' }),
        guid: z.string().optional().openapi({ description: 'The podcast:guid of the feed, if the client knows it' }),
      }),
    ),
  })
  .openapi('SubscriptionsRequest');

export const subscriptionRecord = z
  .object({
    feed_url: z.string(),
    guid: uuid,
    is_subscribed: z.boolean(),
    subscription_changed: dateTime.optional(),
    new_guid: uuid.optional(),
    guid_changed: dateTime.optional(),
    deleted: dateTime.optional(),
  })
  .openapi('Subscription');

export const postResponse = z
  .object({
    success: z.array(
      z.object({ feed_url: z.string(), guid: uuid, is_subscribed: z.literal(true), subscription_changed: dateTime }),
    ),
    failure: z.array(z.object({ feed_url: z.string(), message: z.string() })),
  })
  .openapi('SubscriptionsResult');

export const listQuery = z.object({
  since: dateTime.optional().openapi({ description: 'Only records changed strictly after this time' }),
  page: z.string().optional().openapi({ description: 'Page number, from 1 (default 1)', example: '1' }),
  per_page: z
    .string()
    .optional()
    .openapi({
      description: `Records per page, 1-${MAX_PER_PAGE} (default ${DEFAULT_PER_PAGE}); larger values are clamped`,
      example: '50',
    }),
});

export const listResponse = z
  .object({
    total: z.number().int(),
    page: z.number().int(),
    per_page: z.number().int(),
    next: z.string().optional(),
    previous: z.string().optional(),
    subscriptions: z.array(subscriptionRecord),
  })
  .openapi('SubscriptionPage');

export const guidParams = z.object({ guid: uuid });

export const patchBody = z
  .object({
    new_feed_url: z.string().optional(),
    new_guid: z.string().optional(),
    is_subscribed: z.boolean().optional(),
  })
  .refine((b) => b.new_feed_url !== undefined || b.new_guid !== undefined || b.is_subscribed !== undefined, {
    message: 'give at least one of new_feed_url, new_guid, is_subscribed',
  })
  .openapi('SubscriptionPatch');

export const patchResponse = z
  .object({
    new_feed_url: z.string().optional(),
    is_subscribed: z.boolean().optional(),
    subscription_changed: dateTime.optional(),
    new_guid: uuid.optional(),
    guid_changed: dateTime.optional(),
  })
  .openapi('SubscriptionChanges');
