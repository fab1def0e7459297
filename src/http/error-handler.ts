import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { isDatabaseUnavailable } from '../db/errors';
import type { Logger } from '../logger';
import { routeTemplate } from './method';
import { HttpError } from './errors';

/** Statuses that answer input the server refuses: a client's mistake (or attack), never the server's. */
const REFUSED = new Set([400, 405, 413, 415]);

declare module 'express-serve-static-core' {
  interface Locals {
    /** Why the request's input was refused: the request log's line says it, as a warning. */
    refused?: string;
    /** What a door's error body has beside `{code, message}` (the sync draft's `{error, description}`). */
    errorFields?: (e: HttpError) => Record<string, string>;
  }
}

/**
 * A refused input is a warning with its reason, never an error with a stack: a client can send as much
 * bad input as it likes without filling the error log. With a request log, on the request's own line.
 */
export function noteRefused(logger: Logger, e: HttpError, req: Request, res: Response): void {
  if (!REFUSED.has(e.status)) return;
  // Capped: a message can name a field the client chose, of any length.
  const refused = e.message.slice(0, 300);
  if (req.log) res.locals.refused = refused;
  else logger.warn({ reqId: req.id, route: routeTemplate(res), status: e.status, refused }, 'input refused');
}

/**
 * The safety net behind every door: an HttpError a door made, a 503 while the database is away (logged as a
 * warning), and a 500 for anything else, logged once with the request id: on the request's own line when
 * there is a request log. `internal` is the 500's message, in the door's words.
 */
export function lastResort(
  logger: Logger,
  err: unknown,
  req: Request,
  res: Response,
  internal = 'Internal server error',
): HttpError {
  if (err instanceof HttpError) return err;
  if (isDatabaseUnavailable(err)) {
    logger.warn({ reqId: req.id, err: (err as Error).message }, 'database unavailable');
    return new HttpError(503, 'Service temporarily unavailable');
  }
  if (req.log) res.err = err as Error;
  else logger.error({ err, reqId: req.id, route: routeTemplate(res) }, 'unhandled error');
  return new HttpError(500, internal);
}

/** A path no door answers. */
export const notFound: RequestHandler = () => {
  throw new HttpError(404, 'Resource not found');
};

/**
 * The app's last handler: the `{code, message}` body that the Open Podcast API and gpodder.net share, and
 * what the door set in `res.locals.errorFields`.
 */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    const httpError = lastResort(logger, err, req, res);
    noteRefused(logger, httpError, req, res);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.set(httpError.headers);
    res.status(httpError.status).json({
      code: String(httpError.status),
      message: httpError.message,
      ...res.locals.errorFields?.(httpError),
    });
  };
}
