import pg from 'pg';
import type { Logger } from '../logger';

type Entry = { userId: number; expires: number };

/**
 * Remembers credentials that were verified recently, so that HTTP Basic does not cost an argon2 hash
 * and a bearer token does not cost a query on every request. Any change of passwords or tokens, by
 * this process or another (the CLI, another instance), is announced with NOTIFY castsync_auth and
 * empties the cache everywhere.
 */
export class AuthCache {
  private readonly entries = new Map<string, Entry>();
  /** Off while changes could go unannounced (the listener is not connected). */
  active = true;
  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

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
