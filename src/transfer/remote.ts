import type http from 'node:http';
import type { Config } from '../config';
import { type AddressPolicy, checkTarget, failure, FetchFailed, readBody, send } from '../feeds/service';
import { InvalidInput } from '../errors';
import { parseCleanJson } from '../text';

/** Caps on what reading another sync server may cost: each answer, and the whole import's reading. */
export type RemoteLimits = {
  /** One request, its body included (IMPORT_TIMEOUT). */
  timeoutMs: number;
  /** One answer, decompressed (IMPORT_MAX_BYTES). */
  maxBytes: number;
  /** Every request of the import, from the first (IMPORT_TOTAL_TIMEOUT). */
  totalMs: number;
  /** Every answer of the import together, decompressed (IMPORT_TOTAL_MAX_BYTES). */
  totalBytes: number;
};

/** The caps of the settings, for the web page's imports and the command line's alike. */
export const remoteLimits = (
  config: Pick<Config, 'importTimeout' | 'importMaxBytes' | 'importTotalTimeout' | 'importTotalMaxBytes'>,
): RemoteLimits => ({
  timeoutMs: config.importTimeout * 1000,
  maxBytes: config.importMaxBytes,
  totalMs: config.importTotalTimeout * 1000,
  totalBytes: config.importTotalMaxBytes,
});

const MIB = 1024 * 1024;
const bytes = (n: number) => (n % MIB === 0 ? `${n / MIB} MiB` : `${n} bytes`);
const span = (ms: number) => (ms % 60_000 === 0 ? `${ms / 60_000} min` : `${ms / 1000} s`);

/** An import that cannot go on, and why, in words for the person who started it (each door shows the reason). */
export class ImportFailed extends InvalidInput {}

/** A sync server's address as a person gives it, checked: the base URL without a trailing slash. */
export function serverAddress(serverUrl: string): string {
  let url: URL;
  try {
    url = new URL(serverUrl.trim());
  } catch {
    throw new ImportFailed(`${serverUrl} is not a URL: give the server's address, like https://gpodder.net`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ImportFailed(`${serverUrl} is not an http or https address`);
  }
  if (url.username || url.password) throw new ImportFailed('Give the name and password apart, not in the address');
  return url.href.replace(/\/+$/, '');
}

const USER_AGENT = 'castsync (podcast sync server; import)';

/**
 * Another sync server, reached as one of its users: Basic authentication on every request, and the
 * `sessionid` cookie once the server gave one (gpodder.net's login). Every request goes to an address the
 * policy allows, follows no redirect, must answer within the time cap and with at most maxBytes of JSON;
 * and all of them together, from the first, within totalMs and with at most totalBytes: a server that
 * answers slowly forever, or sends without end, stops the import instead of holding it.
 */
export class RemoteServer {
  private readonly base: string;
  private readonly authorization: string;
  private cookie: string | undefined;
  /** The whole reading's deadline, running from the server's first request. */
  private overall: AbortSignal | undefined;
  /** Requests made so far. */
  requests = 0;
  /** Bytes of the answers read so far, decompressed. */
  received = 0;

  constructor(
    serverUrl: string,
    readonly user: string,
    password: string,
    private readonly policy: AddressPolicy,
    private readonly limits: RemoteLimits,
    private readonly signal?: AbortSignal,
  ) {
    this.base = serverAddress(serverUrl);
    this.authorization = 'Basic ' + Buffer.from(`${user}:${password}`, 'utf8').toString('base64');
  }

  /** The server's address as given, without a trailing slash. */
  get address(): string {
    return this.base;
  }

  /** POSTs with an empty body; the sessionid it sets is sent from then on. */
  async post(path: string): Promise<void> {
    const res = await this.request(path, 'POST');
    res.resume();
  }

  /** GETs a JSON document. */
  async json(path: string): Promise<unknown> {
    const url = this.base + path;
    const res = await this.request(path, 'GET', async (r) => {
      const type = String(r.headers['content-type'] ?? '').toLowerCase();
      if (type.includes('html')) {
        r.resume();
        throw new ImportFailed(`${url} answered with a web page, not JSON: is ${this.base} the right address?`);
      }
      const left = this.limits.totalBytes - this.received;
      const body = await readBody(r, Math.min(this.limits.maxBytes, left)).catch((err: unknown) => {
        // Refused by readBody: over its cap, which was what is left of the whole import's.
        throw err instanceof FetchFailed && err.refused && left < this.limits.maxBytes ? this.tooMuch() : err;
      });
      this.received += body.length;
      return body;
    });
    try {
      // Another server's text: what cannot be stored loses that character, never the import.
      return parseCleanJson(res.toString('utf8'));
    } catch (err) {
      throw new ImportFailed(`${url} answered with something that is ${(err as InvalidInput).reason}`);
    }
  }

  /** One request, its status checked; `read` reads the body within the same deadline. */
  private async request(path: string, method: string): Promise<http.IncomingMessage>;
  private async request<T>(path: string, method: string, read: (res: http.IncomingMessage) => Promise<T>): Promise<T>;
  private async request<T>(
    path: string,
    method: string,
    read?: (res: http.IncomingMessage) => Promise<T>,
  ): Promise<T | http.IncomingMessage> {
    const url = new URL(this.base + path);
    this.overall ??= AbortSignal.timeout(this.limits.totalMs);
    if (this.overall.aborted) throw this.tooLong();
    const deadline = AbortSignal.timeout(this.limits.timeoutMs);
    const signal = AbortSignal.any([deadline, this.overall, ...(this.signal ? [this.signal] : [])]);
    const headers: Record<string, string> = {
      'user-agent': USER_AGENT,
      accept: 'application/json',
      authorization: this.authorization,
    };
    if (method === 'POST') headers['content-length'] = '0';
    if (this.cookie) headers.cookie = this.cookie;
    this.requests++;
    try {
      checkTarget(url, this.policy);
      const res = await send(url, headers, this.policy, signal, method);
      const status = res.statusCode ?? 0;
      if (status !== 200) {
        res.resume();
        throw this.refusal(url, status, res.headers.location);
      }
      const session = [res.headers['set-cookie'] ?? []].flat().find((c) => c.startsWith('sessionid='));
      if (session) this.cookie = session.split(';')[0];
      return read ? await read(res) : res;
    } catch (err) {
      if (err instanceof ImportFailed) throw err;
      if (this.overall.aborted && !this.signal?.aborted) throw this.tooLong();
      const e = failure(err, { deadline, timeoutMs: this.limits.timeoutMs, signal: this.signal });
      if (e instanceof FetchFailed) throw new ImportFailed(`${url.origin}: ${e.message}`);
      throw e;
    }
  }

  private tooLong(): ImportFailed {
    return new ImportFailed(
      `${this.base} did not give everything within ${span(this.limits.totalMs)}, the longest an import may read ` +
        `another server (IMPORT_TOTAL_TIMEOUT): nothing was imported. Try again later, or ask the administrator`,
    );
  }

  private tooMuch(): ImportFailed {
    return new ImportFailed(
      `${this.base} sent more than ${bytes(this.limits.totalBytes)}, the most an import may read from another ` +
        `server (IMPORT_TOTAL_MAX_BYTES): nothing was imported. Ask the administrator`,
    );
  }

  private refusal(url: URL, status: number, location: string | undefined): ImportFailed {
    if (status === 401 || status === 403) {
      return new ImportFailed(`${url.origin} refused the name ${this.user} and its password (HTTP ${status})`);
    }
    if (status >= 300 && status < 400) {
      return new ImportFailed(
        `${url.href} redirects to ${location ?? 'another address'}: give the address the server is at now`,
      );
    }
    if (status === 404)
      return new ImportFailed(`${url.href} is not there (HTTP 404): is ${this.base} the right address?`);
    return new ImportFailed(`${url.href} answered HTTP ${status}`);
  }
}
