import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { loginBody, logoutBody, refreshBody, sessionResponse } from './auth/schemas';
import { deletionAccepted, deletionStatusResponse } from './deletions/schemas';
import { z } from './http/zod';
import {
  guidParams,
  listQuery,
  listResponse,
  patchBody,
  patchResponse,
  postBody,
  postResponse,
  subscriptionRecord,
} from './subscriptions/schemas';

export const errorBody = z
  .object({
    code: z.string().openapi({ description: 'The HTTP status, as a string', example: '401' }),
    message: z.string().openapi({ example: 'User not authorized' }),
  })
  .openapi('Error');

export const capabilitiesResponse = z
  .object({
    capabilities: z.record(z.string(), z.record(z.string(), z.object({ status: z.string(), root: z.string() }))),
  })
  .openapi('Capabilities');

const json = (schema: z.ZodType, description: string) => ({ description, content: { 'application/json': { schema } } });
const error = (description: string) => json(errorBody, description);
const secured: Record<string, string[]>[] = [{ basic: [] }, { bearer: [] }];
const authErrors = { 401: error('No, wrong or expired credentials'), 429: error('Too many failed attempts') };

/** The OpenAPI 3.1 document, built from the zod schemas that validate the requests. */
export function openApiDocument(): object {
  const r = new OpenAPIRegistry();
  r.registerComponent('securitySchemes', 'basic', {
    type: 'http',
    scheme: 'basic',
    description: 'Username and password, or username and a personal access token',
  });
  r.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'An access token from /v1/auth/login, or a personal access token',
  });
  const guidPath = { params: guidParams };

  r.registerPath({
    method: 'get',
    path: '/v1/capabilities',
    summary: 'What this server supports',
    responses: { 200: json(capabilitiesResponse, 'Capabilities') },
  });
  r.registerPath({
    method: 'post',
    path: '/v1/auth/login',
    summary: 'Exchange a username and password for tokens',
    request: { body: { content: { 'application/json': { schema: loginBody } } } },
    responses: { 200: json(sessionResponse, 'Tokens'), ...authErrors, 405: error('Body could not be validated') },
  });
  r.registerPath({
    method: 'post',
    path: '/v1/auth/refresh',
    summary: 'Exchange a refresh token for new tokens (the old one is spent)',
    request: { body: { content: { 'application/json': { schema: refreshBody } } } },
    responses: { 200: json(sessionResponse, 'Tokens'), 401: error('Unknown, expired or used refresh token') },
  });
  r.registerPath({
    method: 'post',
    path: '/v1/auth/logout',
    summary: 'Revoke the session of a refresh token, or every session of the user',
    security: secured,
    request: { body: { content: { 'application/json': { schema: logoutBody } } } },
    responses: { 204: { description: 'Revoked' }, ...authErrors },
  });
  r.registerPath({
    method: 'get',
    path: '/v1/subscriptions',
    summary: 'Records changed since a time, paged',
    security: secured,
    request: { query: listQuery },
    responses: {
      200: {
        ...json(listResponse, 'A page of records'),
        headers: {
          'Sync-Timestamp': {
            description: 'Send this as the next `since` to receive every later change',
            schema: { type: 'string', format: 'date-time' },
          },
        },
      },
      400: error('Bad query parameter'),
      ...authErrors,
    },
  });
  r.registerPath({
    method: 'post',
    path: '/v1/subscriptions',
    summary: 'Subscribe to feeds',
    security: secured,
    request: { body: { content: { 'application/json': { schema: postBody } } } },
    responses: {
      200: json(postResponse, 'One success or failure entry per feed, in request order'),
      ...authErrors,
      405: error('Body could not be validated'),
      413: error('Body over 1 MiB or more than 1,000 feeds'),
      415: error('Body is not JSON'),
    },
  });
  r.registerPath({
    method: 'get',
    path: '/v1/subscriptions/{guid}',
    summary: 'One record, by any guid of its chain',
    security: secured,
    request: guidPath,
    responses: {
      200: json(subscriptionRecord, 'The record'),
      ...authErrors,
      404: error('Not found'),
      405: error('Not a UUID'),
      410: error('Deleted'),
    },
  });
  r.registerPath({
    method: 'patch',
    path: '/v1/subscriptions/{guid}',
    summary: 'Change the feed URL, guid or subscription state',
    security: secured,
    request: { ...guidPath, body: { content: { 'application/json': { schema: patchBody } } } },
    responses: {
      200: json(patchResponse, 'Only the fields that changed'),
      ...authErrors,
      404: error('Not found'),
      405: error('Body could not be validated'),
      410: error('Deleted'),
    },
  });
  r.registerPath({
    method: 'delete',
    path: '/v1/subscriptions/{guid}',
    summary: 'Delete a subscription (processed in the background)',
    security: secured,
    request: guidPath,
    responses: {
      202: json(deletionAccepted, 'Accepted'),
      ...authErrors,
      404: error('Not found'),
      405: error('Not a UUID'),
      410: error('Already deleted'),
    },
  });
  r.registerPath({
    method: 'get',
    path: '/v1/deletions/{id}',
    summary: 'The status of a deletion request',
    security: secured,
    request: { params: z.object({ id: z.string().openapi({ example: '42' }) }) },
    responses: { 200: json(deletionStatusResponse, 'Status'), ...authErrors, 404: error('Not found') },
  });
  for (const [path, summary] of [
    ['/healthz', 'The process is up (no database check)'],
    ['/readyz', 'The database is reachable and the server is not shutting down'],
    ['/metrics', 'Prometheus metrics'],
    ['/openapi.json', 'This document'],
    ['/docs', 'Interactive documentation'],
  ] as const) {
    r.registerPath({
      method: 'get',
      path,
      summary,
      responses: { 200: { description: 'OK' }, ...(path === '/readyz' && { 503: error('Not ready') }) },
    });
  }

  return new OpenApiGeneratorV31(r.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'castsync',
      version: '0.1.0',
      description: 'Podcast subscription sync server: the Open Podcast API subscriptions resource.',
    },
  });
}
