import pg from 'pg';
import type { Logger } from '../logger';

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
  /** Off while changes could go unannounced (the listener is not connected). */
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

/** Listens for credential changes; while the listener is not connected, nothing is cached. */
export function listenForCredentialChanges(
  url: string,
  cache: AuthCache,
  logger: Logger,
): { stop: () => Promise<void> } {
  let client: pg.Client | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  cache.active = false;

  const connect = async () => {
    const c = new pg.Client({ connectionString: url, application_name: 'castsync-auth-listener', keepAlive: true });
    c.on('notification', () => cache.clear());
    c.on('error', () => undefined);
    c.on('end', () => {
      cache.active = false;
      cache.clear();
      if (!stopped) timer = setTimeout(() => void connect(), 1000);
    });
    client = c;
    try {
      await c.connect();
      await c.query('LISTEN castsync_auth');
      cache.active = true;
      cache.clear();
    } catch (err) {
      logger.debug({ err: (err as Error).message }, 'credential change listener not connected');
      await c.end().catch(() => undefined);
    }
  };
  void connect();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await client?.end().catch(() => undefined);
    },
  };
}
