/** An error with an HTTP status and a message that is safe to show to the client. */
export class HttpError extends Error {
  readonly headers: Record<string, string>;
  constructor(
    readonly status: number,
    message: string,
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.headers = headers;
  }
}

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
export class NotFound extends HttpError {
  constructor() {
    super(404, 'Resource not found');
  }
}
export class ValidationFailed extends HttpError {
  constructor(detail?: string) {
    super(405, detail ? `Input could not be validated: ${detail}` : 'Input could not be validated');
  }
}
export class MethodNotAllowed extends HttpError {
  constructor(allow: string[]) {
    super(405, 'Method not allowed', { Allow: allow.join(', ') });
  }
}
export class Gone extends HttpError {
  constructor() {
    super(410, 'Subscription has been deleted');
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
  constructor(retryAfterSeconds: number) {
    super(429, 'Too many requests', { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) });
  }
}
export class ServiceUnavailable extends HttpError {
  constructor() {
    super(503, 'Service temporarily unavailable');
  }
}
