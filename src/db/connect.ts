import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../logger';
import { isDatabaseUnavailable } from './errors';

/** Retries fn while the database is unreachable (a database container may start after the app). */
export async function whenDatabaseUp<T>(fn: () => Promise<T>, logger: Logger, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!isDatabaseUnavailable(err) || Date.now() > deadline) throw err;
      if (attempt === 1) logger.warn({ err: (err as Error).message }, 'waiting for the database');
      await sleep(Math.min(2000, 100 * attempt));
    }
  }
}
