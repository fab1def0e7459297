import type { RequestHandler, Response } from 'express';
import zlib from 'node:zlib';

/** The encodings answers are compressed in, best first where a client accepts both equally. */
const ENCODINGS = ['br', 'gzip'] as const;
export type Encoding = (typeof ENCODINGS)[number];

/**
 * The levels, chosen by CPU per byte saved on a download of episode actions (docs/performance.md): brotli's
 * quality 1 is smaller than gzip's best and cheaper than gzip's level 1; each level above saves a byte for
 * more CPU than sending it costs. Brotli's window is 256 KiB (its default 4 MiB would be held by every
 * answer under way), and every write is flushed, so that a streamed answer goes as it is written.
 */
const compressor = (encoding: Encoding): zlib.Gzip | zlib.BrotliCompress =>
  encoding === 'gzip'
    ? zlib.createGzip({ level: 1, flush: zlib.constants.Z_SYNC_FLUSH })
    : zlib.createBrotliCompress({
        flush: zlib.constants.BROTLI_OPERATION_FLUSH,
        params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1, [zlib.constants.BROTLI_PARAM_LGWIN]: 18 },
      });

/**
 * The encoding to answer a request's Accept-Encoding in, or undefined for none (identity): the one of
 * br and gzip with the highest q-value above 0 (br when equal), unless the client prefers identity. No
 * header, or one naming neither, is identity (RFC 9110, 12.5.3).
 */
export function chooseEncoding(header: string | undefined): Encoding | undefined {
  if (header === undefined) return undefined;
  const weights = new Map<string, number>();
  for (const part of header.toLowerCase().split(',')) {
    const [name = '', ...params] = part.split(';').map((s) => s.trim());
    const q = params.find((p) => p.startsWith('q='));
    weights.set(name, q === undefined ? 1 : Number(q.slice(2)) || 0);
  }
  const weight = (e: string) => weights.get(e) ?? weights.get('*') ?? 0;
  const best = [...ENCODINGS].sort((a, b) => weight(b) - weight(a))[0]!;
  // identity, unnamed, is acceptable but below every encoding the client names.
  return weight(best) > 0 && weight(best) >= (weights.get('identity') ?? 0) ? best : undefined;
}

/**
 * Web pages are never compressed: each carries its form's CSRF token, and many echo what a request asked
 * (a search, a URL), the two that BREACH needs to read a secret from the size of compressed answers.
 * Their stylesheet and scripts, which hold no secret, are compressed.
 */
const SECRET_BEARING = /^text\/html/i;

/** Text formats; not an event stream, which stays open (and is not an answer this server sends). */
const COMPRESSIBLE = /^(text\/(?!event-stream)|application\/([\w.-]+\+)?(json|xml|javascript)|image\/svg\+xml)/i;

/** Whether the answer about to be sent is worth compressing: its status, type and length (undefined: streamed). */
function worthIt(res: Response, minBytes: number, length: number | undefined): boolean {
  const status = res.statusCode;
  if (status < 200 || status === 204 || status === 206 || status === 304) return false;
  if (res.getHeader('Content-Encoding') !== undefined) return false;
  if (/\bno-transform\b/i.test(String(res.getHeader('Cache-Control') ?? ''))) return false;
  const type = String(res.getHeader('Content-Type') ?? '');
  if (!COMPRESSIBLE.test(type) || SECRET_BEARING.test(type)) return false;
  const declared = res.getHeader('Content-Length');
  const size = declared === undefined ? length : Number(declared);
  return size === undefined || size >= minBytes;
}

type Chunk = string | Buffer | Uint8Array;
type Callback = (err?: Error | null) => void;

/**
 * Compresses answers, on every door, for a client that accepts gzip or brotli: text answers of at least
 * `minBytes` (a streamed one, whose length is not known, always), not already encoded, not a 204, 206 or
 * 304, nor a HEAD. A compressed answer goes chunked, without Content-Length, a strong ETag made weak (the
 * same content, other bytes). Backpressure holds through it: a writer's 'drain' is the compressor's, and
 * the compressor waits while the socket is full, so a streamed answer never piles up in memory.
 * Every answer says `Vary: Accept-Encoding`, those sent as they are too.
 */
export function compression(enabled: boolean, minBytes: number): RequestHandler {
  return (req, res, next) => {
    if (!enabled) return next();
    res.vary('Accept-Encoding');
    const encoding = chooseEncoding(req.headers['accept-encoding']);
    if (encoding !== undefined && req.method !== 'HEAD') compressOnWrite(res, encoding, minBytes);
    next();
  };
}

type Listener = (...a: unknown[]) => void;
/** The response's own methods, called with any of their forms of arguments. */
type Own = {
  write: (this: Response, ...a: unknown[]) => boolean;
  end: (this: Response, ...a: unknown[]) => Response;
  on: (this: Response, event: string | symbol, listener: Listener) => Response;
  off: (this: Response, event: string | symbol, listener: Listener) => Response;
};

/**
 * Makes the first write or end decide, and, compressing, sends what is written through the compressor. A
 * writer waiting for 'drain' waits for the compressor's (the socket's resumes the compressor): a 'drain'
 * listener added before the decision is held until it, as a writer adds one before its first write.
 */
function compressOnWrite(res: Response, encoding: Encoding, minBytes: number): void {
  const own = { write: res.write, end: res.end, on: res.on, off: res.off } as unknown as Own;
  const { write, end, on, off } = own;
  let stream: zlib.Gzip | zlib.BrotliCompress | undefined;
  let drains: Listener[] | undefined = [];
  const decide = (length: number | undefined) => {
    const waiting = drains ?? [];
    drains = undefined;
    if (!res.headersSent && worthIt(res, minBytes, length)) stream = startCompressor(res, encoding, own);
    for (const l of waiting) (stream ?? res).on('drain', l);
  };
  res.write = function (chunk: Chunk, enc?: BufferEncoding | Callback, cb?: Callback) {
    if (drains) decide(undefined);
    if (stream === undefined) return write.call(res, chunk, enc, cb);
    return typeof enc === 'function' ? stream.write(chunk, enc) : stream.write(chunk, enc ?? 'utf8', cb);
  } as typeof res.write;
  res.end = function (chunk?: Chunk | Callback, enc?: BufferEncoding | Callback, cb?: Callback) {
    const body = typeof chunk === 'function' ? undefined : chunk;
    if (drains) decide(body === undefined ? 0 : Buffer.byteLength(body));
    if (stream === undefined) return end.call(res, chunk, enc, cb);
    const done = [chunk, enc, cb].find((a) => typeof a === 'function') as Callback | undefined;
    if (done) res.once('finish', done);
    if (body === undefined) stream.end();
    else stream.end(body, typeof enc === 'string' ? enc : 'utf8');
    return res;
  } as typeof res.end;
  res.on = res.addListener = function (event: string | symbol, listener: Listener) {
    if (event !== 'drain') on.call(res, event, listener);
    else if (drains) drains.push(listener);
    else if (stream) stream.on(event, listener);
    else on.call(res, event, listener);
    return res;
  } as typeof res.on;
  res.off = res.removeListener = function (event: string | symbol, listener: Listener) {
    if (event !== 'drain') off.call(res, event, listener);
    else if (drains) drains = drains.filter((l) => l !== listener);
    else if (stream) stream.off(event, listener);
    else off.call(res, event, listener);
    return res;
  } as typeof res.off;
}

/** Sets the headers of a compressed answer and starts its compressor, which writes into the socket. */
function startCompressor(res: Response, encoding: Encoding, { write, end, on }: Own): zlib.Gzip | zlib.BrotliCompress {
  res.setHeader('Content-Encoding', encoding);
  res.removeHeader('Content-Length');
  const etag = res.getHeader('ETag');
  if (typeof etag === 'string' && !etag.startsWith('W/')) res.setHeader('ETag', `W/${etag}`);
  const stream = compressor(encoding);
  stream.on('data', (c: Buffer) => {
    if (!write.call(res, c)) stream.pause();
  });
  stream.on('end', () => end.call(res));
  on.call(res, 'drain', () => stream.resume());
  on.call(res, 'close', () => stream.destroy());
  return stream;
}
