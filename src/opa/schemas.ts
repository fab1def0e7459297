import { parseTimestamp } from '../timestamps';
import { z } from '../http/zod';
import { parseGuid } from '../subscriptions/service';

/** Feeds in one POST. */
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

const MAX_PAGE = 1_000_000_000;

/** A query parameter given at most once; the simple query parser makes a repeated one an array. */
const once = (name: string) => z.string({ error: `Invalid ${name}: give it once, as a plain value` }).optional();

/** A whole number of at least 1 and at most `max`; over it is refused, or with `clamp` taken as `max`. */
const count = (name: string, fallback: number, max: number, clamp: boolean) =>
  once(name).transform((raw, ctx) => {
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || n < 1) {
      ctx.addIssue({ code: 'custom', message: `Invalid ${name}: must be a whole number of at least 1` });
      return z.NEVER;
    }
    if (n <= max) return n;
    if (clamp) return max;
    ctx.addIssue({ code: 'custom', message: `Invalid ${name}: must be at most ${max}` });
    return z.NEVER;
  });

/** since, page and per_page of GET /v1/subscriptions; anything else in the query is ignored. */
export const listQuery = z.object({
  since: once('since')
    .transform((raw, ctx) => {
      if (raw === undefined) return undefined;
      const since = parseTimestamp(raw);
      if (since) return since;
      ctx.addIssue({
        code: 'custom',
        message: 'Invalid since: expected an ISO 8601 date-time such as 2026-11-22T10:15:30.123Z',
      });
      return z.NEVER;
    })
    .openapi({
      type: 'string',
      format: 'date-time',
      description: 'Only records changed strictly after this time',
      example: '2026-11-22T10:15:30.123Z',
    }),
  page: count('page', 1, MAX_PAGE, false).openapi({
    type: 'string',
    description: 'Page number, from 1 (default 1)',
    example: '1',
  }),
  per_page: count('per_page', DEFAULT_PER_PAGE, MAX_PER_PAGE, true).openapi({
    type: 'string',
    description: `Records per page, 1-${MAX_PER_PAGE} (default ${DEFAULT_PER_PAGE}); larger values are clamped`,
    example: '50',
  }),
});
export type ListQuery = z.output<typeof listQuery>;

/** The envelope of a paged list: the number of items, the page, links to its neighbours. */
export const pageEnvelope = z.object({
  total: z.number().int(),
  page: z.number().int(),
  per_page: z.number().int(),
  next: z.string().optional(),
  previous: z.string().optional(),
});

export const listResponse = pageEnvelope
  .extend({ subscriptions: z.array(subscriptionRecord) })
  .openapi('SubscriptionPage');

/** The guid in the path; not a UUID is the contract's 405. */
export const guidParams = z.object({
  guid: z
    .string()
    .transform((raw, ctx) => {
      const guid = parseGuid(raw);
      if (guid) return guid;
      ctx.addIssue({ code: 'custom', message: 'the guid in the path is not a UUID' });
      return z.NEVER;
    })
    .openapi({ type: 'string', format: 'uuid', example: '2d8bb39b-8d34-48d4-b223-a0d01eb27d71' }),
});

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

export type RecordOut = z.infer<typeof subscriptionRecord>;
export type PostResult = z.infer<typeof postResponse>;
export type PatchResult = z.infer<typeof patchResponse>;

export const deletionAccepted = z
  .object({ deletion_id: z.number().int(), message: z.string() })
  .openapi('DeletionAccepted');

export const deletionStatusResponse = z
  .object({
    deletion_id: z.number().int(),
    status: z.enum(['PENDING', 'SUCCESS', 'FAILURE']),
    message: z.string(),
  })
  .openapi('DeletionStatus');

/**
 * An id in the path (`what`: "deletion", "session"): any whole number. One past the numbers ids are read as
 * (2^53 - 1) is no id this server gave, undefined here and "not found" to the client, as any other id the
 * user does not have.
 */
export const idInPath = (what: string, example: string) =>
  z
    .string()
    .regex(/^\d+$/, { error: `the ${what} id is not a whole number` })
    .transform((s) => {
      const id = Number(s);
      return Number.isSafeInteger(id) ? id : undefined;
    })
    .openapi({ type: 'string', example });

/** The deletion id in the path. */
export const deletionParams = z.object({ id: idInPath('deletion', '42') });
