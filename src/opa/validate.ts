import type { z } from 'zod';
import { unstorableAt, UNSTORABLE_REASON } from '../text';
import { BadRequest, ValidationFailed } from './errors';

function describe(issue: z.core.$ZodIssue | undefined): string | undefined {
  if (!issue) return undefined;
  const where = issue.path.length > 0 ? issue.path.join('.') : 'body';
  return `${where}: ${issue.message}`;
}

/** Parses a request body; any mismatch is the contract's 405. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  // Any string of the body, known field or not: the whole body is refused, as for any other bad field.
  const bad = unstorableAt(body);
  if (bad !== undefined) throw new ValidationFailed(`${bad}: ${UNSTORABLE_REASON}`);
  const r = schema.safeParse(body);
  if (!r.success) throw new ValidationFailed(describe(r.error.issues[0]));
  return r.data;
}

/** Parses query parameters with the schema that documents them; a bad one is a 400 with the schema's message. */
export function parseQuery<S extends z.ZodType>(schema: S, query: unknown): z.output<S> {
  const r = schema.safeParse(query);
  if (!r.success) throw new BadRequest(r.error.issues[0]?.message ?? 'Invalid query');
  return r.data;
}

/** Parses path parameters with the schema that documents them; a bad one is the contract's 405. */
export function parsePath<S extends z.ZodType>(schema: S, params: unknown): z.output<S> {
  const r = schema.safeParse(params);
  if (!r.success) throw new ValidationFailed(r.error.issues[0]?.message);
  return r.data;
}
