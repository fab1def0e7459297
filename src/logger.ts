import pino from 'pino';

export type Logger = pino.Logger;

/** Credentials never reach the log: headers and any password or token field are redacted. */
const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.refresh_token',
  '*.access_token',
  '*.token',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, destination);
}

// The request log's URL: what a log reader could use is taken out of it, the rest kept for diagnosis.
// A login flow's code (a reader could allow a waiting app into their own account), the OpenID provider's
// whole answer to the sign-in callback (its code and state), query parameters named as secrets, and the
// user and query parts of any URL sent in a query or a path segment (a private feed's token or password).

const REDACTED = '[redacted]';
/** A login flow's approval page, wherever it appears (the path, or a `next` that leads back to it). */
const LOGIN_FLOW = /(\/login\/flow\/)[^/?#&]+/gi;
/** The OpenID sign-in callback (as Express routes it): every parameter is the provider's answer. */
const OIDC_CALLBACK = /^\/web\/sign-in\/oidc\/callback\/?$/i;
/** Query parameters whose value is a secret, whatever the route. */
const SECRET_NAMES = new Set([
  'code',
  'session_state',
  'id_token',
  'access_token',
  'refresh_token',
  'token',
  'password',
  'client_secret',
]);
/** A URL with a scheme (http, https, feed, itpc, …), or one without that begins with a host name. */
const WITH_SCHEME = /^[a-z][a-z\d+.-]*:\/\//i;
const HOST_FIRST = /^(?:[^\s/?#@:]+:[^\s/?#@]*@)?[\w-]+(?:\.[\w-]+)+(?::\d+)?(?:[/?#]|$)/i;

/**
 * A path segment that looks like a secret: a private feed's token in its path (Supercast, Substack,
 * Memberful, a self-hosted feed behind a secret address), at least 16 characters of a token's alphabet
 * (a file extension apart) with at least four digits and four letters. A word, a slug or a short id is
 * not one; a UUID or a long hex id is, public or not: the log keeps the host and the path's shape.
 */
const TOKEN_SEGMENT = /^(?=(?:[^\d]*\d){4})(?=(?:[^a-z]*[a-z]){4})[\w-]{16,}(?=\.\w{1,5}$|$)/i;
const withoutTokens = (path: string): string =>
  path
    .split('/')
    .map((segment) => segment.replace(TOKEN_SEGMENT, REDACTED))
    .join('/');

/**
 * A URL as the log may hold it: without its user part, its query, and any path segment that looks like a
 * token (a private feed's password or token); any other text as it is. For every URL a log line names (a
 * feed's, a document's).
 */
export function urlForLog(value: string): string {
  const text = value.replace(LOGIN_FLOW, `$1${REDACTED}`);
  const scheme = WITH_SCHEME.exec(text)?.[0];
  if (scheme === undefined && !HOST_FIRST.test(text)) return text;
  const rest = text.slice(scheme?.length ?? 0);
  const authorityEnd = rest.search(/[/?#]|$/);
  const authority = rest.slice(0, authorityEnd).replace(/^.*@/s, `${REDACTED}@`);
  const path = rest.slice(authorityEnd).replace(/[?#].*$/s, (q) => (q.startsWith('?') ? `?${REDACTED}` : ''));
  const at = path.search(/[?#]|$/);
  return `${scheme ?? ''}${authority}${withoutTokens(path.slice(0, at))}${path.slice(at)}`;
}

const decoded = (s: string): string | undefined => {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
};

/** A path segment, query name or value: its raw text when nothing in it is a secret, else its safe form. */
function safePart(raw: string): string {
  const value = decoded(raw);
  if (value === undefined) return REDACTED;
  const safe = urlForLog(value);
  if (safe === value) return raw;
  try {
    return encodeURI(safe)
      .replaceAll('%5Bredacted%5D', REDACTED)
      .replace(/[&#+=]/g, encodeURIComponent);
  } catch {
    return REDACTED;
  }
}

/**
 * The query's parameters, each value safe. A URL sent unencoded with a query of its own runs on into the
 * parameters after it (`?url=https://host/feed?a=1&key=…`): after such a value, every value is redacted.
 */
function safeQuery(query: string, everyValue: boolean): string {
  let spilt = everyValue;
  const pairs = query.split('&').map((pair) => {
    const eq = pair.indexOf('=');
    const [name, value] = eq < 0 ? [pair, undefined] : [pair.slice(0, eq), pair.slice(eq + 1)];
    const safeName = safePart(name);
    const secret = spilt || safeName !== name || SECRET_NAMES.has((decoded(name) ?? '').toLowerCase());
    const safeValue = value === undefined ? undefined : secret ? REDACTED : safePart(value);
    if (safeName !== name || (value !== undefined && value.includes('?') && safeValue !== value)) spilt = true;
    return safeValue === undefined ? safeName : `${safeName}=${safeValue}`;
  });
  return pairs.join('&');
}

/** A request's URL as the log may hold it (see above). */
export function requestUrlForLog(url: string): string {
  const at = url.indexOf('?');
  const path = at < 0 ? url : url.slice(0, at);
  const safePath = path.replace(LOGIN_FLOW, `$1${REDACTED}`).split('/').map(safePart).join('/');
  return at < 0 ? safePath : `${safePath}?${safeQuery(url.slice(at + 1), OIDC_CALLBACK.test(path))}`;
}
