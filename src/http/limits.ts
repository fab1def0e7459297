import { createHash } from 'node:crypto';
import type { Request } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
import type { Config } from '../config';
import { notifyThrough, type Subscriber } from '../db/notifications';
import type { Queryable } from '../db/pool';
import { CredentialsRefused, TooManyFailures } from '../errors';
import type { TaskList } from '../jobs/worker';
import type { Logger } from '../logger';
import * as repo from './failures-repo';

/** Where a process tells the others that a key is blocked: "scope digest end" (the end in ms). */
export const BLOCKS_CHANNEL = 'castsync_limits';

/**
 * Refused credentials, counted per key (a client address and a username) in a window that starts at the
 * key's first refusal, in the database, so that every instance counts the same. Once `limit` are refused,
 * every attempt under that key gets 429 until the window ends, whatever credentials it carries, so that
 * the answer tells nothing about them. Accepted credentials are not counted, and cost nothing while this
 * process hears of every block (each is announced by NOTIFY): it then knows the blocked keys itself, and
 * asks the database at each attempt only while it does not hear (src/db/notifications.ts), or holds
 * `maxKeys` blocks already.
 */
export class FailureLimiter {
  /** The blocked keys this process knows of (by digest), and when each window ends (ms). */
  private readonly blocked = new Map<string, number>();
  /** Whether every block made anywhere reaches `blocked`; true without a listener (one process). */
  hears = true;
  constructor(
    private readonly db: Queryable,
    readonly scope: string,
    readonly limit: number,
    private readonly windowMs: number,
    private readonly options: { now?: () => number; maxKeys?: number } = {},
  ) {}

  /**
   * Runs `attempt` unless the key is blocked (TooManyFailures); undefined from it is a refusal, thrown as
   * `refused` (CredentialsRefused unless the form says it in words of its own).
   */
  async attempt<T>(
    key: string,
    attempt: () => Promise<T | undefined>,
    refused: () => Error = () => new CredentialsRefused(),
  ): Promise<T> {
    const digest = createHash('sha256').update(key, 'utf8').digest();
    const wait = await this.retryAfter(digest);
    if (wait > 0) throw new TooManyFailures(wait);
    const result = await attempt();
    if (result !== undefined) {
      // Guesses sent at once all pass the check above, and those refused meanwhile may have blocked the
      // key: a right one among them then gets 429 like any attempt beyond the limit, and tells nothing.
      const blockedMeanwhile = await this.retryAfter(digest);
      if (blockedMeanwhile > 0) throw new TooManyFailures(blockedMeanwhile);
      return result;
    }
    const w = await repo.countRefusal(this.db, this.scope, digest, this.date(0), this.date(this.windowMs));
    if (w.refused >= this.limit) this.remember(digest.toString('base64'), w.ends_at.getTime());
    if (w.refused === this.limit) await notifyThrough(this.db)(BLOCKS_CHANNEL, this.blockPayload(digest, w.ends_at));
    // More than the limit: another instance blocked the key a moment ago.
    if (w.refused > this.limit) throw new TooManyFailures(this.secondsUntil(w.ends_at.getTime()));
    throw refused();
  }

  /** Seconds until the key may try again: 0 when it may now. */
  private async retryAfter(digest: Buffer): Promise<number> {
    const k = digest.toString('base64');
    const until = this.blocked.get(k);
    if (until !== undefined && until <= this.now()) this.blocked.delete(k);
    else if (until !== undefined) return this.secondsUntil(until);
    if (this.hears && this.blocked.size < this.maxKeys) return 0;
    const w = await repo.findWindow(this.db, this.scope, digest, this.date(0));
    if (!w || w.refused < this.limit) return 0;
    this.remember(k, w.ends_at.getTime());
    return this.secondsUntil(w.ends_at.getTime());
  }

  /** A block heard of, or read when the listener (re)connects. */
  remember(digest: string, until: number): void {
    if (this.blocked.size >= this.maxKeys) {
      for (const [k, end] of this.blocked) if (end <= this.now()) this.blocked.delete(k);
    }
    // Full of live blocks: this one stays in the database only, which is asked at each attempt meanwhile.
    if (this.blocked.size < this.maxKeys) this.blocked.set(digest, until);
  }

  /** Every block of the scope that lasts, from the database. */
  async catchUp(): Promise<void> {
    for (const b of await repo.blockedKeys(this.db, this.scope, this.limit, this.date(0))) {
      this.remember(b.key_hash.toString('base64'), b.ends_at.getTime());
    }
  }

  private blockPayload = (digest: Buffer, end: Date) => `${this.scope} ${digest.toString('base64')} ${end.getTime()}`;
  private get maxKeys() {
    return this.options.maxKeys ?? 100_000;
  }
  private now = () => (this.options.now ?? Date.now)();
  private date = (inMs: number) => new Date(this.now() + inMs);
  private secondsUntil = (end: number) => (end - this.now()) / 1000;
}

/** A limiter's key: the client address (IPv6 by its /56 network) and the username in lower case. */
export const clientKey = (req: Request, username: string): string =>
  `${ipKeyGenerator(req.ip ?? 'unknown')}|${username.toLowerCase()}`;

export type AuthLimits = { login: FailureLimiter; failedAuth: FailureLimiter };

/** Failed logins, and failed authentication of API requests, each per client address and username. */
export const authLimits = (config: Config, db: Queryable): AuthLimits => ({
  login: new FailureLimiter(db, 'login', config.loginRateLimit, config.rateLimitWindow * 1000),
  failedAuth: new FailureLimiter(db, 'auth', config.authFailureRateLimit, config.rateLimitWindow * 1000),
});

/**
 * The limiters' part in the process's notification listener: the blocks other processes announce; on
 * (re)connection, every block that lasts; while it does not hear, the database at each attempt.
 */
export function failureBlocks(limits: AuthLimits): Subscriber {
  const all = [limits.login, limits.failedAuth];
  return {
    channel: BLOCKS_CHANNEL,
    heard: (payload) => {
      const [scope, digest, end] = payload.split(' ');
      const limiter = all.find((l) => l.scope === scope);
      if (limiter && digest && Number.isFinite(Number(end))) limiter.remember(digest, Number(end));
    },
    up: async () => {
      for (const l of all) await l.catchUp();
      for (const l of all) l.hears = true;
    },
    down: () => {
      for (const l of all) l.hears = false;
    },
  };
}

/** Ended windows are deleted hourly. */
export const limitTasks = (db: Queryable, logger: Logger): TaskList => ({
  tasks: {
    cleanup_auth_failures: async () => {
      const n = await repo.deleteEndedWindows(db);
      if (n > 0) logger.debug({ windows: n }, 'ended failure windows removed');
    },
  },
  crontab: ['30 * * * * cleanup_auth_failures'],
});
