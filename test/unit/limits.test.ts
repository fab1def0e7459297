import { FailureLimiter } from '../../src/http/limits';
import { CredentialsRefused, TooManyFailures } from '../../src/errors';

const refused = async () => undefined;
const accepted = async () => 7;

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

afterEach(() => jest.useRealTimers());

test('after `limit` refusals a key gets 429, even with good credentials, until its window ends', async () => {
  jest.useFakeTimers({ now: 1_000_000 });
  const limiter = new FailureLimiter(3, 60_000);
  for (let i = 0; i < 3; i++) expect(await outcome(limiter, 'a', refused)).toEqual({ status: 401 });
  // The answer must not tell a right password from a wrong one.
  expect(await outcome(limiter, 'a', accepted)).toEqual({ status: 429, retryAfter: 60 });
  jest.setSystemTime(1_000_000 + 45_500);
  expect(await outcome(limiter, 'a', refused)).toEqual({ status: 429, retryAfter: 15 });
  // Other keys are not affected.
  expect(await outcome(limiter, 'b', accepted)).toBe(7);
  jest.setSystemTime(1_000_000 + 60_000);
  expect(await outcome(limiter, 'a', accepted)).toBe(7);
  // The next window starts at the next refusal, with a count of one.
  expect(await outcome(limiter, 'a', refused)).toEqual({ status: 401 });
  expect(await outcome(limiter, 'a', refused)).toEqual({ status: 401 });
  expect(await outcome(limiter, 'a', accepted)).toBe(7);
});

test('accepted credentials do not count', async () => {
  const limiter = new FailureLimiter(1, 60_000);
  for (let i = 0; i < 5; i++) expect(await limiter.attempt('a', accepted)).toBe(7);
  await expect(limiter.attempt('a', refused)).rejects.toBeInstanceOf(CredentialsRefused);
  await expect(limiter.attempt('a', accepted)).rejects.toBeInstanceOf(TooManyFailures);
});

test('the number of keys held is bounded: ended windows go first, then the oldest', async () => {
  jest.useFakeTimers({ now: 0 });
  const limiter = new FailureLimiter(1, 1_000, 3);
  for (const k of ['a', 'b']) await outcome(limiter, k, refused);
  jest.setSystemTime(2_000); // a and b have ended
  for (const k of ['c', 'd', 'e']) await outcome(limiter, k, refused);
  for (const k of ['c', 'd', 'e']) expect(await outcome(limiter, k, accepted)).toMatchObject({ status: 429 });
  await outcome(limiter, 'f', refused); // full: c, the oldest, makes room
  expect(await outcome(limiter, 'c', accepted)).toBe(7);
  for (const k of ['e', 'f']) expect(await outcome(limiter, k, accepted)).toMatchObject({ status: 429 });
});
