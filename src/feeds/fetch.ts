import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import { pipeline } from 'node:stream/promises';
import { Writable } from 'node:stream';
import zlib from 'node:zlib';
import { checkedLookup, ForbiddenAddress, literalAddress, refusal, type AddressPolicy } from './address-policy';

export type FetchLimits = { timeoutMs: number; maxBytes: number; maxRedirects: number };

/** What the fetcher remembers of the last answer, sent back so an unchanged feed costs a 304. */
export type Validators = { etag: string | null; lastModified: string | null };

export type FetchResult =
  | {
      kind: 'body';
      body: Buffer;
      url: string;
      movedTo: string | undefined;
      validators: Validators;
      address: string | undefined;
    }
  | { kind: 'not-modified'; movedTo: string | undefined };

/**
 * What is known of an answer before its body is read: its media type (the Content-Type, parameters
 * dropped, lower case; '' when it names none) and the address it came from.
 */
export type Answer = { type: string; address: string | undefined };

/**
 * A fetch that did not give a feed; `refused` when the policy (or a limit) stopped it, not the server;
 * `retryAfterSeconds` when the server's answer said how long to wait before asking again (Retry-After).
 */
export class FetchFailed extends Error {
  constructor(
    message: string,
    readonly refused = false,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

/**
 * The wait an answer's Retry-After asks for, in seconds: a number of seconds, or an HTTP date taken from
 * the answer's own Date (so that a host whose clock is off is still waited for as long as it asked).
 */
export function retryAfter(headers: http.IncomingHttpHeaders): number | undefined {
  const value = headers['retry-after']?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value);
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  const sent = headers.date ? Date.parse(headers.date) : NaN;
  return Math.max(0, Math.ceil((at - (Number.isNaN(sent) ? Date.now() : sent)) / 1000));
}

const PERMANENT = new Set([301, 308]);
const REDIRECT = new Set([301, 302, 303, 307, 308]);
// Podcast hosts see who fetches: some count subscribers by it.
const USER_AGENT = 'castsync (podcast sync server; feed fetcher)';

/** The URL's host, checked when it is an address literal (those never reach the checked lookup). */
export function checkTarget(url: URL, policy: AddressPolicy): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new FetchFailed(`refused scheme ${url.protocol}`, true);
  const literal = literalAddress(url.hostname);
  const why = literal && refusal(literal, policy);
  if (why) throw new FetchFailed(`refused address: ${why}`, true);
}

/**
 * The agent of every https request: no connection is kept open (as with agent: false), and the TLS
 * settings, the default ones (Node's CA store), are made once. With agent: false each request made its
 * own, about 0.16 ms of CPU, whether or not it ever connected.
 */
let httpsAgent: https.Agent | undefined;
const tlsAgent = () => (httpsAgent ??= new https.Agent({ keepAlive: false, secureContext: tls.createSecureContext() }));

/**
 * One request (a GET unless `method` says otherwise, with `body` if given) to an address the policy allows,
 * with no redirect followed: the response, body not yet read.
 */
export function send(
  url: URL,
  headers: Record<string, string>,
  policy: AddressPolicy,
  signal: AbortSignal,
  method = 'GET',
  body?: Buffer,
): Promise<http.IncomingMessage> {
  const secure = url.protocol === 'https:';
  const options = {
    method,
    headers,
    signal,
    agent: secure ? tlsAgent() : false,
    lookup: checkedLookup(policy, { signal }),
  };
  return new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = (secure ? https : http).request(url, options, resolve);
    req.on('error', reject);
    req.end(body);
  });
}

/** Reads the body, decompressed, and fails as soon as it passes maxBytes (a compressed bomb too). */
export async function readBody(res: http.IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(res.headers['content-length']);
  if (declared > maxBytes) throw new FetchFailed(`body of ${declared} bytes is over the limit of ${maxBytes}`, true);
  const encoding = String(res.headers['content-encoding'] ?? '').toLowerCase();
  const decompress =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? zlib.createGunzip()
      : encoding === 'deflate'
        ? zlib.createInflate()
        : encoding === 'br'
          ? zlib.createBrotliDecompress()
          : undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > maxBytes) return done(new FetchFailed(`body is over the limit of ${maxBytes} bytes`, true));
      chunks.push(chunk);
      done();
    },
  });
  if (decompress) await pipeline(res, decompress, sink);
  else await pipeline(res, sink);
  return Buffer.concat(chunks);
}

/**
 * GETs `start` with redirects followed up to the limit, each target checked again: the first answer that
 * is not a redirect, and where the leading run of permanent redirects (301, 308) ended, if there was one.
 */
async function follow(
  start: URL,
  headers: Record<string, string>,
  { policy, limits }: { policy: AddressPolicy; limits: FetchLimits },
  abort: AbortSignal,
): Promise<{ res: http.IncomingMessage; url: URL; movedTo: string | undefined }> {
  let url = start;
  let movedTo: string | undefined;
  let stillPermanent = true;
  for (let hop = 0; ; hop++) {
    checkTarget(url, policy);
    const res = await send(url, headers, policy, abort);
    if (!REDIRECT.has(res.statusCode ?? 0)) return { res, url, movedTo };
    res.resume();
    const location = res.headers.location;
    if (!location) throw new FetchFailed(`HTTP ${res.statusCode} without a Location`);
    if (hop >= limits.maxRedirects) throw new FetchFailed(`more than ${limits.maxRedirects} redirects`);
    url = new URL(location, url);
    stillPermanent &&= PERMANENT.has(res.statusCode!);
    if (stillPermanent) movedTo = url.href;
  }
}

type FetchOptions = {
  policy: AddressPolicy;
  limits: FetchLimits;
  signal?: AbortSignal | undefined;
  /** Why an answer is not wanted (its type, where it came from), checked before its body is read. */
  admit?: ((answer: Answer) => string | undefined) | undefined;
};

/** Throws, the body unread, when `admit` refuses the answer. */
function admitted(
  res: http.IncomingMessage,
  address: string | undefined,
  admit: (answer: Answer) => string | undefined,
) {
  const type = String(res.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  const why = admit({ type, address });
  if (why) {
    res.resume();
    throw new FetchFailed(why, true);
  }
}

/**
 * GETs a feed or a document: conditional on the validators, redirects followed up to the limit with each
 * target checked again, the body capped, everything within one deadline. `movedTo` is where the leading
 * run of permanent redirects (301, 308) ended, when there was one: the feed's new home.
 */
async function fetchBody(
  address: string,
  validators: Validators,
  accept: string,
  { policy, limits, signal, admit }: FetchOptions,
): Promise<FetchResult> {
  const deadline = AbortSignal.timeout(limits.timeoutMs);
  const abort = signal ? AbortSignal.any([signal, deadline]) : deadline;
  const headers: Record<string, string> = { 'user-agent': USER_AGENT, accept, 'accept-encoding': 'gzip, deflate, br' };
  if (validators.etag) headers['if-none-match'] = validators.etag;
  if (validators.lastModified) headers['if-modified-since'] = validators.lastModified;
  try {
    const { res, url, movedTo } = await follow(new URL(address), headers, { policy, limits }, abort);
    if (res.statusCode === 304) {
      res.resume();
      return { kind: 'not-modified', movedTo };
    }
    if (res.statusCode !== 200) {
      res.resume();
      throw new FetchFailed(`HTTP ${res.statusCode}`, false, retryAfter(res.headers));
    }
    const from = res.socket?.remoteAddress;
    if (admit) admitted(res, from, admit);
    const body = await readBody(res, limits.maxBytes);
    const etag = res.headers.etag ?? null;
    const lastModified = res.headers['last-modified'] ?? null;
    return { kind: 'body', body, url: url.href, movedTo, validators: { etag, lastModified }, address: from };
  } catch (err) {
    throw failure(err, { deadline, timeoutMs: limits.timeoutMs, signal });
  }
}

/** GETs a feed, conditional on the validators of its last answer (fetchBody). */
export const fetchFeed = (feedUrl: string, validators: Validators, options: FetchOptions): Promise<FetchResult> =>
  fetchBody(
    feedUrl,
    validators,
    'application/rss+xml, application/atom+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.5',
    options,
  );

/**
 * GETs a document a feed's item points to (its chapters, its transcript) under the given policy, redirect
 * limit, size cap and deadline, an answer `admit` refuses left unread: the body, and the address it
 * came from.
 */
export async function fetchDocument(
  documentUrl: string,
  accept: string,
  options: FetchOptions,
): Promise<{ body: Buffer; address: string | undefined }> {
  const got = await fetchBody(documentUrl, { etag: null, lastModified: null }, accept, options);
  if (got.kind !== 'body') throw new FetchFailed('HTTP 304 to an unconditional request');
  return { body: got.body, address: got.address };
}

/**
 * What a request that threw says: a refusal of the policy, the deadline passed or a network error, as a
 * FetchFailed; the caller's own abort (`signal`) as it is.
 */
export function failure(
  err: unknown,
  { deadline, timeoutMs, signal }: { deadline: AbortSignal; timeoutMs: number; signal?: AbortSignal | undefined },
): unknown {
  if (err instanceof FetchFailed) return err;
  if (err instanceof ForbiddenAddress) return new FetchFailed(`refused address: ${err.message}`, true);
  if (deadline.aborted) return new FetchFailed(`no complete answer within ${timeoutMs} ms`);
  if (signal?.aborted) return err;
  const e = err as NodeJS.ErrnoException;
  return new FetchFailed(e.code ? `${e.code}: ${e.message}` : e.message);
}
