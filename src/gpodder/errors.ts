import type { ErrorRequestHandler } from 'express';
import {
  AccountArchived,
  CredentialsRefused,
  Deleted,
  InvalidInput,
  NotFound as DomainNotFound,
  TooManyFailures,
} from '../errors';
import { HttpError, isUndecodableBody, isUndecodablePath } from '../http/errors';
import type { RequestPart } from '../http/text-edge';

// gpodder.net's errors (../shared/CONTRACT-gpodder.md, section 3): the statuses mygpo uses with the
// `{code, message}` body, the Basic challenge, and the one place where domain errors and body-parser
// errors become them.

export class BadRequest extends HttpError {
  constructor(message: string) {
    super(400, message);
  }
}
/** gpodder clients answer this challenge (mygpoclient sends credentials only after it). */
export class Unauthorized extends HttpError {
  constructor(message = 'User not authorized') {
    super(401, message, { 'WWW-Authenticate': 'Basic realm="castsync"' });
  }
}
export class NotFound extends HttpError {
  constructor() {
    super(404, 'Resource not found');
  }
}

/** Text that cannot be stored in the URL: a 400 naming where. */
export const urlRefused = (where: RequestPart, reason: string): HttpError =>
  new BadRequest(where.part === 'query' ? `Invalid ${where.name}: ${reason}` : `The path ${reason}`);

/** What gpodder answers for an error; undefined leaves it to the safety net (503, 500). */
export function gpodderError(err: unknown): HttpError | undefined {
  if (err instanceof HttpError) return err;
  if (err instanceof InvalidInput) return new BadRequest(err.reason);
  if (err instanceof DomainNotFound || err instanceof Deleted) return new NotFound();
  if (err instanceof CredentialsRefused) return new Unauthorized();
  // An archived account's own credentials: the app shows the message, which says how to bring it back.
  if (err instanceof AccountArchived) return new Unauthorized(err.reason);
  if (err instanceof TooManyFailures) {
    return new HttpError(429, 'Too many requests', { 'Retry-After': String(err.retryAfter) });
  }
  if (isUndecodablePath(err)) return new BadRequest('The path is not percent-encoded UTF-8');
  if (isUndecodableBody(err)) return new BadRequest('The body could not be read');
  const type = (err as { type?: unknown }).type;
  if (type === 'entity.too.large') return new HttpError(413, 'Request body is larger than 4 MiB');
  if (type === 'entity.parse.failed') return new BadRequest('The body is not valid JSON');
  if (typeof type === 'string' && /^(encoding|charset)\.unsupported$/.test(type)) {
    return new HttpError(415, 'Unsupported media type');
  }
  if (type === 'request.aborted' || type === 'request.size.invalid' || type === 'stream.encoding.set') {
    return new BadRequest('The body could not be read');
  }
  return undefined;
}

/** The gpodder router's one mapping; anything it does not know goes on to the app's safety net. */
export const gpodderErrors: ErrorRequestHandler = (err: unknown, _req, _res, next) => {
  next(gpodderError(err) ?? err);
};
