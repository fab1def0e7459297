import type { TaskList } from './worker';

// The nightly clean-ups: a task that runs at a time of day, and its way of removing rows: a statement at a time, each short, holding the rows it
// removes only while it runs; a run stopped part way (a shutdown, a crash) has removed only what it was
// allowed to, and the next run goes on.

/** Rows removed by one statement. */
export const ROWS_AT_ONCE = 10_000;

/** Runs `remove` a batch at a time until a batch comes back short or `signal` aborts; how many went. */
export async function inBatches(remove: (limit: number) => Promise<number>, signal?: AbortSignal): Promise<number> {
  let removed = 0;
  while (!signal?.aborted) {
    const n = await remove(ROWS_AT_ONCE);
    removed += n;
    if (n < ROWS_AT_ONCE) break;
  }
  return removed;
}

/**
 * A task that runs every night at `at` (cron's minute and hour, UTC), `clean` given a signal that aborts
 * when the worker stops, so that a long clean-up ends between two statements.
 */
export function nightly(task: string, at: string, clean: (signal: AbortSignal) => Promise<void>): TaskList {
  const stopping = new AbortController();
  return {
    tasks: { [task]: () => clean(stopping.signal) },
    crontab: [`${at} * * * ${task}`],
    stop: () => stopping.abort(),
  };
}
