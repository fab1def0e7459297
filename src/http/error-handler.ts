import type { ErrorRequestHandler, RequestHandler } from 'express';
import { isDatabaseUnavailable } from '../db/errors';
import type { Logger } from '../logger';
import { routeTemplate } from './method';
import {
  HttpError,
  NotFound,
  PayloadTooLarge,
  ServiceUnavailable,
  UnsupportedMediaType,
  ValidationFailed,
} from './errors';

/** Errors thrown by express.json(), mapped to the contract's statuses. */
function fromBodyParser(err: { type?: unknown }): HttpError | undefined {
  switch (err.type) {
    case 'entity.too.large':
      return new PayloadTooLarge('Request body is larger than 1 MiB');
    case 'entity.parse.failed':
      return new ValidationFailed('the body is not valid JSON');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new UnsupportedMediaType();
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
      return new ValidationFailed('the body could not be read');
    default:
      return undefined;
  }
}

export function toHttpError(err: unknown): HttpError | undefined {
  if (err instanceof HttpError) return err;
  const parsed = fromBodyParser(err as { type?: unknown });
  if (parsed) return parsed;
  if (isDatabaseUnavailable(err)) return new ServiceUnavailable();
  return undefined;
}

export const notFound: RequestHandler = () => {
  throw new NotFound();
};

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    let httpError = toHttpError(err);
    if (!httpError) {
      // Logged once: on the request's own line when there is a request log, else here.
      if (req.log) res.err = err as Error;
      else logger.error({ err, reqId: req.id, route: routeTemplate(res) }, 'unhandled error');
      httpError = new HttpError(500, 'Internal server error');
    } else if (httpError.status === 503) {
      logger.warn({ reqId: req.id, err: (err as Error).message }, 'database unavailable');
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.set(httpError.headers);
    res.status(httpError.status).json({ code: String(httpError.status), message: httpError.message });
  };
}
