import type { z } from 'zod';
import { ValidationFailed } from './errors';

function describe(issue: z.core.$ZodIssue | undefined): string | undefined {
  if (!issue) return undefined;
  const where = issue.path.length > 0 ? issue.path.join('.') : 'body';
  return `${where}: ${issue.message}`;
}

/** Parses a request body; any mismatch is the contract's 405. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const r = schema.safeParse(body);
  if (!r.success) throw new ValidationFailed(describe(r.error.issues[0]));
  return r.data;
}
