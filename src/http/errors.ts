/**
 * An error with an HTTP status and a message that is safe to show to the client. What every door shares;
 * each door's own statuses, messages and challenges are in its folder (opa/errors.ts, gpodder/errors.ts,
 * web/errors.ts), and each maps the domain's errors (src/errors.ts) in one place.
 */
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

/** A path that is there, asked with a method it does not answer: the same 405 at every door. */
export class MethodNotAllowed extends HttpError {
  constructor(allow: string[]) {
    super(405, 'Method not allowed', { Allow: allow.join(', ') });
  }
}

/** The router's error for a path parameter that is not percent-encoded UTF-8 (`%ED%A0%80`, `%FF`). */
export const isUndecodablePath = (err: unknown): boolean => err instanceof URIError;

/**
 * The body parser's error for a body its Content-Encoding (gzip, deflate, br) does not decode: zlib's
 * error, which the parser passes on with no `type` of its own. The client's bad input, never a fault.
 */
export const isUndecodableBody = (err: unknown): boolean => {
  const code = (err as { code?: unknown } | null)?.code;
  return (err as { status?: unknown } | null)?.status === 400 && typeof code === 'string' && code.startsWith('Z_');
};
