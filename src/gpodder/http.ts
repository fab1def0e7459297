import express, { type Request, type RequestHandler } from 'express';
import type { ApiContext } from '../api-context';
import type { z } from 'zod';
import { jsonParser } from '../http/text-edge';
import { BadRequest } from './errors';

/** gpodder bodies are 4 MiB at most: a first sync uploads a whole library. */
const BODY_LIMIT = '4mb';

const json = jsonParser({ type: () => true, limit: BODY_LIMIT, strict: false });

/**
 * JSON whatever the Content-Type (mygpoclient labels JSON as a form, AntennaPod's login as plain/text),
 * its charset included.
 * An empty body is no body, which each route reads as its contract says (`{}`, or `[]` for a list), not
 * the parser's `{}`: that would make an empty batch of episode actions a body of the wrong shape.
 */
export const anyJson: RequestHandler = (req, res, next) => {
  // JSON is UTF-8 (RFC 8259): a charset the label names besides (ISO-8859-1 is Apache HttpClient's default
  // for text, `utf8` a common misspelling) is no reason to refuse the body, as the parser would with a 415.
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(req.headers['content-type'] ?? '')?.[1];
  if (charset !== undefined && !/^utf-/i.test(charset)) req.headers['content-type'] = 'application/json';
  json(req, res, (err?: unknown) => {
    if (err === undefined && req.headers['content-length'] === '0') req.body = undefined;
    next(err);
  });
};

/** The body as text, for the simple API's txt and OPML uploads. */
export const anyText: RequestHandler = express.text({ type: () => true, limit: BODY_LIMIT });

/** Parses a JSON body (an empty one as `empty`; JSON null is no body of any shape); a mismatch is a 400 naming where. */
export function parseJsonBody<S extends z.ZodType>(schema: S, body: unknown, empty: unknown = {}): z.output<S> {
  const r = schema.safeParse(body === undefined ? empty : body);
  if (!r.success) {
    const issue = r.error.issues[0];
    const where = issue && issue.path.length > 0 ? issue.path.join('.') : 'body';
    throw new BadRequest(`Invalid ${where}: ${issue?.message ?? 'invalid'}`);
  }
  return r.data;
}

/** Every gpodder answer: no-store (AntennaPod's OkHttp keeps a 20 MB cache). */
export const noStore: RequestHandler = (_req, res, next) => {
  res.set('Cache-Control', 'no-store');
  next();
};

/** Where the app and the browser reach this server: PUBLIC_URL, else the request's own origin. */
export const baseUrl = (ctx: ApiContext, req: Request): string =>
  ctx.config.publicUrl ?? `${req.protocol}://${req.host}`;
