import type { Subscriber } from '../db/notifications';

type Entry = { userId: number; expires: number };
/** A verified credential: its user, and when it stops being valid (if it ever does). */
export type Verified = { userId: number; notAfter?: number };

/**
 * Remembers credentials that were verified recently, so that HTTP Basic does not cost an argon2 hash
 * and a bearer token does not cost a query on every request. Any change of passwords or tokens, by
 * this process or another (the CLI, another instance), is announced with NOTIFY castsync_auth and
 * empties the cache everywhere.
 */
export class AuthCache {
  private readonly entries = new Map<string, Entry>();
  /** Verifications under way, by key; clear() drops them, so that their results are not remembered. */
  private readonly pending = new Map<string, Promise<number | undefined>>();
  /** Off while changes could go unannounced (the process's listener has not heard its own heartbeat). */
  active = true;
  /** Called whenever the cache is emptied (a credential changed): for caches derived from this one. */
  private readonly clearListeners: (() => void)[] = [];
  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  /**
   * The user of a credential: from the cache, or else from verify. Requests that arrive with the same
   * credential while it is being verified wait for that verification instead of starting their own: an app
   * that syncs over several connections at once costs one argon2 hash, not one per connection. A failed
   * verification is not remembered; one that began before a credential change is neither shared nor
   * remembered after it.
   */
  resolve(key: string, verify: () => Promise<Verified | undefined>): Promise<number | undefined> {
    const hit = this.get(key);
    if (hit !== undefined) return Promise.resolve(hit);
    const underWay = this.pending.get(key);
    if (underWay) return underWay;
    const current = () => this.pending.get(key) === p;
    const p = verify()
      .then((v) => {
        if (v && current()) this.set(key, v.userId, v.notAfter);
        return v?.userId;
      })
      .finally(() => {
        if (current()) this.pending.delete(key);
      });
    this.pending.set(key, p);
    return p;
  }

  get(key: string): number | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.expires <= Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return e.userId;
  }

  set(key: string, userId: number, notAfter = Infinity): void {
    if (this.ttlMs <= 0 || !this.active) return;
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { userId, expires: Math.min(Date.now() + this.ttlMs, notAfter) });
  }

  clear(): void {
    this.entries.clear();
    this.pending.clear();
    for (const l of this.clearListeners) l();
  }

  onClear(listener: () => void): void {
    this.clearListeners.push(listener);
  }
}

/** The channel every credential change is announced on (src/auth/repo.ts). */
export const CREDENTIALS_CHANNEL = 'castsync_auth';

/**
 * The cache's part in the process's notification listener (src/db/notifications.ts): emptied at each
 * credential change; on only while notifications are known to arrive, so that no change can go unheard
 * while a credential is remembered.
 */
export const credentialChanges = (cache: AuthCache): Subscriber => ({
  channel: CREDENTIALS_CHANNEL,
  heard: () => cache.clear(),
  up: () => {
    cache.active = true;
    cache.clear();
  },
  down: () => {
    cache.active = false;
    cache.clear();
  },
});
