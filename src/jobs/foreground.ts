import { setTimeout as sleep } from 'node:timers/promises';

// Requests come first. The HTTP app counts the requests in flight here, and background work that competes
// with them for the CPU (the feed fetcher) asks for a turn before each unit of work: at once while the
// process is not busy (requests in flight less than half the time), and one turn per TURN_MS while it is. So a backlog never takes throughput from the
// APIs, and it still moves, slowly, under a load that never pauses. docs/decisions/feed-fetcher.md.

/** Requests are measured over windows of this long. */
export const WINDOW_MS = 500;
/** The process is busy while requests were in flight for at least this share of the last window. */
export const BUSY_SHARE = 0.5;
/** While the process is busy, background work gets one turn per this long. */
export const TURN_MS = 2000;
/** How often a waiter looks again whether the process is still busy. */
const LOOK_MS = 50;

export class Foreground {
  private active = 0;
  /** The current window's start, the time with requests in flight in it up to `mark`, and the last share. */
  private since: number;
  private busyMs = 0;
  private mark: number;
  private lastShare = 0;
  private lastBusyTurn = -Infinity;

  constructor(private readonly now: () => number = () => performance.now()) {
    this.since = this.mark = now();
  }

  /** Counts a request from now until the returned function is called (later calls do nothing). */
  begin(): () => void {
    this.account();
    this.active++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.account();
      this.active--;
    };
  }

  /** Whether requests were in flight for at least BUSY_SHARE of the last complete window. */
  busy(): boolean {
    this.account();
    return this.lastShare >= BUSY_SHARE;
  }

  /** Brings the time with requests in flight up to now, closing the windows that ended. */
  private account() {
    const now = this.now();
    if (now >= this.since + WINDOW_MS) {
      const end = this.since + WINDOW_MS;
      if (this.active > 0) this.busyMs += end - this.mark;
      this.lastShare = this.busyMs / WINDOW_MS;
      // Whole windows after it were busy throughout, or idle throughout: nothing began or ended in them.
      const skipped = Math.floor((now - end) / WINDOW_MS);
      if (skipped > 0) this.lastShare = this.active > 0 ? 1 : 0;
      this.since = this.mark = end + skipped * WINDOW_MS;
      this.busyMs = 0;
    }
    if (this.active > 0) this.busyMs += now - this.mark;
    this.mark = now;
  }

  /**
   * Resolves when background work may go on: at once while the process is not busy; while it is, when
   * it stops being busy (seen within LOOK_MS), or when this waiter's turn comes (one per TURN_MS for all
   * waiters). An aborted signal ends the wait at once.
   */
  async turn(signal?: AbortSignal): Promise<void> {
    while (this.busy() && !signal?.aborted) {
      const wait = this.lastBusyTurn + TURN_MS - this.now();
      if (wait <= 0) {
        this.lastBusyTurn = this.now();
        return;
      }
      await sleep(Math.min(wait, LOOK_MS), undefined, { signal }).catch(() => undefined);
    }
  }
}

/** For callers that run without an HTTP app (the CLI, tests): never busy. */
export const idleForeground = new Foreground();
