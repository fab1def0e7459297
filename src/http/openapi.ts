import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from './zod';

/** Each router documents its own paths with one of these, next to its routes. */
export type Documenter = (registry: OpenAPIRegistry) => void;

export const errorBody = z
  .object({
    code: z.string().openapi({ description: 'The HTTP status, as a string', example: '401' }),
    message: z.string().openapi({ example: 'User not authorized' }),
  })
  .openapi('Error');

/** A documented JSON response. */
export const json = (schema: z.ZodType, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});
/** A documented error response. */
export const error = (description: string) => json(errorBody, description);
/** A documented JSON request body. */
export const jsonBody = (schema: z.ZodType) => ({ body: { content: { 'application/json': { schema } } } });
