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

// The Open Podcast API's errors (docs: ../shared/CONTRACT.md): its statuses, messages and challenge, and
// the one place where domain errors and body-parser errors become them.

export const AUTH_CHALLENGE = 'Bearer realm="castsync", Basic realm="castsync"';

export class BadRequest extends HttpError {
  constructor(message: string) {
    super(400, message);
  }
}
export class Unauthorized extends HttpError {
  constructor() {
    super(401, 'User not authorized', { 'WWW-Authenticate': AUTH_CHALLENGE });
  }
}
/** The credentials of an archived account: 401, saying so and how to bring the account back. */
export class Archived extends HttpError {
  constructor(err: AccountArchived) {
    super(401, err.reason, { 'WWW-Authenticate': AUTH_CHALLENGE });
  }
}
export class NotFound extends HttpError {
  constructor() {
    super(404, 'Resource not found');
  }
}
/** The contract's answer to input that breaks its rules: 405, not 400. */
export class ValidationFailed extends HttpError {
  constructor(detail?: string) {
    super(405, detail ? `Input could not be validated: ${detail}` : 'Input could not be validated');
  }
}
export class Gone extends HttpError {
  constructor() {
    super(410, 'Subscription has been deleted');
  }
}
export class PreconditionFailed extends HttpError {
  constructor(message: string) {
    super(412, message);
  }
}
export class PreconditionRequired extends HttpError {
  constructor(message: string) {
    super(428, message);
  }
}
export class PayloadTooLarge extends HttpError {
  constructor(message: string) {
    super(413, message);
  }
}
export class UnsupportedMediaType extends HttpError {
  constructor() {
    super(415, 'Unsupported media type');
  }
}
export class TooManyRequests extends HttpError {
  constructor(retryAfter: number) {
    super(429, 'Too many requests', { 'Retry-After': String(retryAfter) });
  }
}

/** Text that cannot be stored in the URL: a bad query parameter is a 400, a bad path the contract's 405. */
export const urlRefused = (where: RequestPart, reason: string): HttpError =>
  where.part === 'query'
    ? new BadRequest(`Invalid ${where.name}: ${reason}`)
    : new ValidationFailed(`the path ${reason}`);

/** Errors thrown by express.json() and express.text(), mapped to the contract's statuses. */
function fromBodyParser(type: unknown, limit: string): HttpError | undefined {
  switch (type) {
    case 'entity.too.large':
      return new PayloadTooLarge(`Request body is larger than ${limit}`);
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

/** What the OPA answers for an error; undefined leaves it to the safety net (503, 500). */
export function opaError(err: unknown): HttpError | undefined {
  if (err instanceof HttpError) return err;
  if (err instanceof DomainNotFound) return new NotFound();
  if (err instanceof Deleted) return new Gone();
  if (err instanceof InvalidInput) return new ValidationFailed(err.reason);
  if (err instanceof CredentialsRefused) return new Unauthorized();
  if (err instanceof AccountArchived) return new Archived(err);
  if (err instanceof TooManyFailures) return new TooManyRequests(err.retryAfter);
  if (isUndecodablePath(err)) return new ValidationFailed('the path is not percent-encoded UTF-8');
  if (isUndecodableBody(err)) return new ValidationFailed('the body could not be read');
  const body = err as { type?: unknown; limit?: unknown };
  // An OPML upload takes 4 MiB, every JSON body 1 MiB: the parser says which limit it hit.
  return fromBodyParser(body.type, body.limit === 4 * 1024 * 1024 ? '4 MiB' : '1 MiB');
}

/** The /v1 router's one mapping; anything it does not know goes on to the app's safety net. */
export const opaErrors: ErrorRequestHandler = (err: unknown, _req, _res, next) => {
  next(opaError(err) ?? err);
};
