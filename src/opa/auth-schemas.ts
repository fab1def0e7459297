import { z } from '../http/zod';

export const loginBody = z
  .object({ username: z.string().max(1024), password: z.string().max(1024) })
  .openapi('LoginRequest');
export const refreshBody = z.object({ refresh_token: z.string().max(1024) }).openapi('RefreshRequest');
export const logoutBody = z.object({ refresh_token: z.string().max(1024).optional() }).openapi('LogoutRequest');

export const sessionResponse = z
  .object({
    access_token: z.string(),
    expires_in: z.number().int().openapi({ description: 'Seconds until the access token expires' }),
    refresh_token: z.string(),
    refresh_expires: z.string().openapi({ format: 'date-time' }),
    refresh_endpoint: z.string(),
  })
  .openapi('Session');
export type SessionOut = z.infer<typeof sessionResponse>;
