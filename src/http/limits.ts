import type { Request } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
import type { Config } from '../config';
import { CredentialsRefused, TooManyFailures } from '../errors';

type Window = { refused: number; endsAt: number };

/**
 * Refused credentials, counted per key (a client address and a username) in a window that starts at the
 * key's first refusal. Once `limit` are refused, every attempt under that key gets 429 until the window
 * ends, whatever credentials it carries, so that the answer tells nothing about them. Accepted
 * credentials are not counted.
 */
export class FailureLimiter {
  private readonly windows = new Map<string, Window>();
  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly maxKeys = 100_000,
  ) {}

  /** Runs `attempt` unless the key is blocked (TooManyFailures); undefined from it is CredentialsRefused. */
  async attempt<T>(key: string, attempt: () => Promise<T | undefined>): Promise<T> {
    const wait = this.retryAfter(key, Date.now());
    if (wait > 0) throw new TooManyFailures(wait);
    const result = await attempt();
    if (result === undefined) {
      this.refuse(key, Date.now());
      throw new CredentialsRefused();
    }
    return result;
  }

  /** Seconds until the key may try again: 0 when it may now. */
  private retryAfter(key: string, now: number): number {
    const w = this.windows.get(key);
    if (!w) return 0;
    if (w.endsAt <= now) {
      this.windows.delete(key);
      return 0;
    }
    return w.refused >= this.limit ? (w.endsAt - now) / 1000 : 0;
  }

  private refuse(key: string, now: number): void {
    const w = this.windows.get(key);
    if (w && w.endsAt > now) {
      w.refused++;
      return;
    }
    this.windows.delete(key);
    if (this.windows.size >= this.maxKeys) {
      for (const [k, x] of this.windows) if (x.endsAt <= now) this.windows.delete(k);
      // Still full: the windows that started first go first (a Map iterates in insertion order).
      for (const k of this.windows.keys()) {
        if (this.windows.size < this.maxKeys) break;
        this.windows.delete(k);
      }
    }
    this.windows.set(key, { refused: 1, endsAt: now + this.windowMs });
  }
}

/** A limiter's key: the client address (IPv6 by its /56 network) and the username in lower case. */
export const clientKey = (req: Request, username: string): string =>
  `${ipKeyGenerator(req.ip ?? 'unknown')}|${username.toLowerCase()}`;

export type AuthLimits = { login: FailureLimiter; failedAuth: FailureLimiter };

/** Failed logins, and failed authentication of API requests, each per client address and username. */
export const authLimits = (config: Config): AuthLimits => ({
  login: new FailureLimiter(config.loginRateLimit, config.rateLimitWindow * 1000),
  failedAuth: new FailureLimiter(config.authFailureRateLimit, config.rateLimitWindow * 1000),
});
