import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { isDatabaseUnavailable } from '../db/errors';
import type { Logger } from '../logger';
import { routeTemplate } from './method';
import { HttpError } from './errors';

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

/** The app's last handler: the `{code, message}` body that the Open Podcast API and gpodder.net share. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    const httpError = lastResort(logger, err, req, res);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.set(httpError.headers);
    res.status(httpError.status).json({ code: String(httpError.status), message: httpError.message });
  };
}
