import { BUSY_SHARE, Foreground, TURN_MS, WINDOW_MS } from '../../src/jobs/foreground';

// The gauge of requests in flight that background work asks for its turn, on a clock the test moves.

function clocked() {
  let now = 1_000;
  const fg = new Foreground(() => now);
  return { fg, advance: (ms: number) => (now += ms) };
}

/** Whether `p` has settled within `ms` of real time (turn() looks again every 50 ms). */
async function settlesWithin(p: Promise<unknown>, ms = 300): Promise<boolean> {
  let settled = false;
  void p.then(() => (settled = true));
  await new Promise((r) => setTimeout(r, ms));
  return settled;
}

/** A clock already in a busy window, with a request still in flight; `end` ends it. */
function busyClock() {
  const c = clocked();
  const end = c.fg.begin();
  c.advance(WINDOW_MS);
  expect(c.fg.busy()).toBe(true);
  return { ...c, end };
}

describe('Foreground', () => {
  test('is busy after a window in which requests were in flight at least BUSY_SHARE of the time', () => {
    const { fg, advance } = clocked();
    expect(fg.busy()).toBe(false);
    // Requests in flight just under the share of one window, with gaps between them: not busy.
    const step = WINDOW_MS / 10;
    for (let i = 0; i < 10; i++) {
      const end = fg.begin();
      advance(i < BUSY_SHARE * 10 - 1 ? step : 0);
      end();
      advance(i < BUSY_SHARE * 10 - 1 ? 0 : step);
    }
    expect(fg.busy()).toBe(false);
    // Exactly the share, in short requests with gaps (as a saturated server sees them): busy.
    for (let i = 0; i < 10; i++) {
      const end = fg.begin();
      advance(i < BUSY_SHARE * 10 ? step : 0);
      end();
      advance(i < BUSY_SHARE * 10 ? 0 : step);
    }
    expect(fg.busy()).toBe(true);
    // A quiet window after it: not busy any more.
    advance(WINDOW_MS);
    expect(fg.busy()).toBe(false);
  });

  test('overlapping requests count their time once; a request ended twice is counted once', () => {
    const { fg, advance } = clocked();
    const a = fg.begin();
    const b = fg.begin();
    advance(WINDOW_MS / 4);
    a();
    a();
    advance(WINDOW_MS / 4);
    b();
    advance(WINDOW_MS / 2);
    expect(fg.busy()).toBe(true); // half the window: two requests overlapping, then one
    advance(WINDOW_MS);
    expect(fg.busy()).toBe(false); // nothing in flight any more, though `a` was ended twice
  });

  test('a request in flight for many windows keeps the process busy; after it, one quiet window ends that', () => {
    const { fg, advance } = clocked();
    const end = fg.begin();
    advance(WINDOW_MS * 1000 + 7);
    expect(fg.busy()).toBe(true);
    end();
    advance(WINDOW_MS * 2);
    expect(fg.busy()).toBe(false);
  });

  test('gives a turn at once while not busy', async () => {
    const { fg } = clocked();
    for (let i = 0; i < 5; i++) expect(await settlesWithin(fg.turn(), 20)).toBe(true);
  });

  test('while busy: one turn per TURN_MS for all waiters, and every waiter goes on once the load ends', async () => {
    const { fg, advance, end } = busyClock();
    expect(await settlesWithin(fg.turn(), 20)).toBe(true);
    const waiting = [fg.turn(), fg.turn(), fg.turn()];
    const settled = waiting.map(() => false);
    waiting.forEach((p, i) => void p.then(() => (settled[i] = true)));
    expect(await settlesWithin(Promise.race(waiting))).toBe(false);
    advance(TURN_MS);
    await new Promise((r) => setTimeout(r, 300));
    expect(settled.filter(Boolean)).toHaveLength(1);
    advance(TURN_MS);
    await new Promise((r) => setTimeout(r, 300));
    expect(settled.filter(Boolean)).toHaveLength(2);
    end();
    advance(WINDOW_MS);
    expect(await settlesWithin(Promise.all(waiting))).toBe(true);
  });

  test('an aborted signal ends the wait', async () => {
    const { fg, end } = busyClock();
    await fg.turn();
    const stop = new AbortController();
    const waiting = fg.turn(stop.signal);
    expect(await settlesWithin(waiting, 100)).toBe(false);
    stop.abort();
    expect(await settlesWithin(waiting, 100)).toBe(true);
    end();
  });
});
