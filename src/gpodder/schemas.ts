import { text, z } from '../http/zod';
import { DEVICE_TYPES } from '../devices/service';
import { MAX_URLS } from './feeds';

// Any string: a URL the URL rules refuse is skipped and named in update_urls, never the whole upload.
const urls = z.array(z.string()).max(MAX_URLS).default([]);

// The cap is the request's (../shared/CONTRACT-gpodder.md, section 3): both lists together.
export const changesBody = z
  .object({ add: urls, remove: urls })
  .refine((b) => b.add.length + b.remove.length <= MAX_URLS, {
    message: `at most ${MAX_URLS} URLs in add and remove together`,
  })
  .openapi('GpodderSubscriptionChanges');
export const changesResponse = z
  .object({ add: z.array(z.string()), remove: z.array(z.string()), timestamp: z.number().int() })
  .openapi('GpodderSubscriptionDelta');
export const pushResponse = z
  .object({ timestamp: z.number().int(), update_urls: z.array(z.tuple([z.string(), z.string()])) })
  .openapi('GpodderUploadResult');
export const deviceBody = z
  .object({ caption: text().max(200).optional(), type: text().optional() })
  .openapi('GpodderDeviceUpdate');
export const deviceList = z
  .array(z.object({ id: z.string(), caption: z.string(), type: z.enum(DEVICE_TYPES), subscriptions: z.number().int() }))
  .openapi('GpodderDevices');
export const favoriteList = z
  .array(
    z.object({
      title: z.string(),
      url: z.string(),
      podcast_title: z.string(),
      podcast_url: z.string(),
      description: z.string(),
      website: z.string(),
      mygpo_link: z
        .string()
        .openapi({ description: "The episode's page on this server's web page, if a feed lists it" }),
      released: z.string().openapi({ description: 'YYYY-MM-DDTHH:MM:SS (UTC), or empty' }),
    }),
  )
  .openapi('GpodderFavorites');
export const syncDevicesBody = z
  .object({
    synchronize: z.array(z.array(z.string())).default([]),
    'stop-synchronize': z.array(z.string()).default([]),
  })
  .openapi('GpodderSyncDevicesChange');
export const syncDevicesResponse = z
  .object({ synchronized: z.array(z.array(z.string())), 'not-synchronized': z.array(z.string()) })
  .openapi('GpodderSyncDevices');
export const sinceQuery = z.object({
  since: z.string().optional().openapi({ description: 'Unix seconds; missing or 0: everything', example: '0' }),
});
export const loginFlowResponse = z
  .object({ poll: z.object({ token: z.string(), endpoint: z.string() }), login: z.string() })
  .openapi('NextcloudLoginFlow');
export const loginFlowResult = z
  .object({ server: z.string(), loginName: z.string(), appPassword: z.string() })
  .openapi('NextcloudLoginFlowResult');
