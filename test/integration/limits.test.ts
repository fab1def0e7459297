import pino from 'pino';
import { listen, notifyThrough } from '../../src/db/notifications';
import { createPool, type Db } from '../../src/db/pool';
import { CredentialsRefused, TooManyFailures } from '../../src/errors';
import { FailureLimiter, failureBlocks } from '../../src/http/limits';
import { sleep } from '../helpers/app';
import { freshDatabase } from '../helpers/db';
import { sentStatements } from '../helpers/statements';

// The failure counters live in PostgreSQL, so that every instance counts the same (src/http/limits.ts).

let database: Awaited<ReturnType<typeof freshDatabase>>;
let db: Db;
const logger = pino({ level: 'silent' });
beforeAll(async () => {
  database = await freshDatabase();
  db = createPool(database.url, { max: 4, timeoutMs: 2000, logger });
});
afterAll(async () => {
  await db.end();
  await database.drop();
});

const refused = async () => undefined;
const accepted = async () => 7;
let keys = 0;
const newKey = () => `127.0.0.1|user${++keys}`;

/** What one attempt under `key` comes to: the user, or the error's status and Retry-After. */
async function outcome(limiter: FailureLimiter, key: string, attempt: () => Promise<number | undefined>) {
  try {
    return await limiter.attempt(key, attempt);
  } catch (err) {
    if (err instanceof TooManyFailures) return { status: 429, retryAfter: err.retryAfter };
    if (err instanceof CredentialsRefused) return { status: 401 };
    throw err;
  }
}

/** A clock the test moves. */
const clock = (start: number) => {
  const c = { now: start, read: () => c.now };
  return c;
};

test('after `limit` refusals a key gets 429, even with good credentials, until its window ends', async () => {
  const time = clock(1_000_000);
  const limiter = new FailureLimiter(db, 'login', 3, 60_000, { now: time.read });
  const [a, b] = [newKey(), newKey()];
  for (let i = 0; i < 3; i++) expect(await outcome(limiter, a, refused)).toEqual({ status: 401 });
  // The answer must not tell a right password from a wrong one.
  expect(await outcome(limiter, a, accepted)).toEqual({ status: 429, retryAfter: 60 });
  time.now += 45_500;
  expect(await outcome(limiter, a, refused)).toEqual({ status: 429, retryAfter: 15 });
  // Other keys are not affected.
  expect(await outcome(limiter, b, accepted)).toBe(7);
  time.now = 1_000_000 + 60_000;
  expect(await outcome(limiter, a, accepted)).toBe(7);
  // The next window starts at the next refusal, with a count of one.
  expect(await outcome(limiter, a, refused)).toEqual({ status: 401 });
  expect(await outcome(limiter, a, refused)).toEqual({ status: 401 });
  expect(await outcome(limiter, a, accepted)).toBe(7);
});

test('credentials accepted after the key was blocked meanwhile (a burst of guesses at once) get 429 too', async () => {
  const limiter = new FailureLimiter(db, 'login', 3, 60_000);
  const k = newKey();
  let begun: (accept: (userId: number) => void) => void = () => undefined;
  const verifying = new Promise<(userId: number) => void>((resolve) => (begun = resolve));
  // The right guess passes the check before the attempt, and is still being verified...
  const right = outcome(limiter, k, () => new Promise<number>((accept) => begun(accept)));
  const accept = await verifying;
  // ...while the wrong guesses sent with it are refused up to the limit.
  for (let i = 0; i < 3; i++) expect(await outcome(limiter, k, refused)).toEqual({ status: 401 });
  accept(7);
  expect(await right).toMatchObject({ status: 429 });
});

test('accepted credentials do not count', async () => {
  const limiter = new FailureLimiter(db, 'login', 1, 60_000);
  const a = newKey();
  for (let i = 0; i < 5; i++) expect(await limiter.attempt(a, accepted)).toBe(7);
  await expect(limiter.attempt(a, refused)).rejects.toBeInstanceOf(CredentialsRefused);
  await expect(limiter.attempt(a, accepted)).rejects.toBeInstanceOf(TooManyFailures);
});

test('past `maxKeys` blocks a process holds, it asks the database: the answers stay the same', async () => {
  const limiter = new FailureLimiter(db, 'auth', 1, 60_000, { maxKeys: 3 });
  const five = Array.from({ length: 5 }, newKey);
  for (const k of five) expect(await outcome(limiter, k, refused)).toEqual({ status: 401 });
  for (const k of five) expect(await outcome(limiter, k, accepted)).toMatchObject({ status: 429 });
  expect(await outcome(limiter, newKey(), accepted)).toBe(7);
});

test('two instances count together, and one that hears nothing asks the database: 429 on both', async () => {
  const [a, b] = [new FailureLimiter(db, 'login', 3, 60_000), new FailureLimiter(db, 'login', 3, 60_000)];
  a.hears = b.hears = false;
  const k = newKey();
  for (let i = 0; i < 2; i++) expect(await outcome(a, k, refused)).toEqual({ status: 401 });
  expect(await outcome(b, k, refused)).toEqual({ status: 401 });
  expect(await outcome(a, k, accepted)).toMatchObject({ status: 429 });
  expect(await outcome(b, k, accepted)).toMatchObject({ status: 429 });
  // The same key under the other limit is another count.
  expect(await outcome(new FailureLimiter(db, 'auth', 3, 60_000), k, accepted)).toBe(7);
});

test('an instance that listens learns of a block at once, and of earlier ones when it starts; a success costs it no statement', async () => {
  const limiters = () => ({
    login: new FailureLimiter(db, 'login', 2, 60_000),
    failedAuth: new FailureLimiter(db, 'auth', 2, 60_000),
  });
  const [a, b] = [limiters(), limiters()];
  // One heartbeat, at the start: none is sent while the statements are counted.
  const options = { notify: notifyThrough(db), heartbeatMs: 600_000, deadlineMs: 5000, retryMs: 50 };
  const early = newKey();
  for (let i = 0; i < 2; i++) await outcome(a.login, early, refused);
  const listeners = [
    listen(database.url, [failureBlocks(a)], logger, options),
    listen(database.url, [failureBlocks(b)], logger, options),
  ];
  try {
    for (let i = 0; i < 250 && !(a.login.hears && b.login.hears); i++) await sleep(20);
    const quiet = newKey();
    expect(await sentStatements(() => outcome(b.login, early, accepted))).toEqual([]);
    expect(await outcome(b.login, early, accepted)).toMatchObject({ status: 429 });
    expect(await sentStatements(() => outcome(b.login, quiet, accepted))).toEqual([]);
    const k = newKey();
    for (let i = 0; i < 2; i++) expect(await outcome(a.login, k, refused)).toEqual({ status: 401 });
    let seen = await outcome(b.login, k, accepted);
    for (let i = 0; i < 100 && seen === 7; i++) {
      await sleep(20);
      seen = await outcome(b.login, k, accepted);
    }
    expect(seen).toMatchObject({ status: 429 });
    expect(await outcome(b.failedAuth, k, accepted)).toBe(7);
  } finally {
    await Promise.all(listeners.map((l) => l.stop()));
  }
});
