import { AuthCache, type Verified } from '../../src/auth/cache';

/** A verification that ends when the test says so, counting how often it was started. */
function deferredVerify() {
  let calls = 0;
  let settle: (v: Verified | undefined) => void = () => undefined;
  let fail: (e: Error) => void = () => undefined;
  const verify = () => {
    calls++;
    return new Promise<Verified | undefined>((resolve, reject) => {
      settle = resolve;
      fail = reject;
    });
  };
  return { verify, calls: () => calls, settle: (v?: Verified) => settle(v), fail: (e: Error) => fail(e) };
}

describe('AuthCache.resolve', () => {
  test('requests with the same credential while it is verified share one verification; then it is cached', async () => {
    const cache = new AuthCache(60_000);
    const d = deferredVerify();
    const waiting = Array.from({ length: 8 }, () => cache.resolve('b:alice', d.verify));
    expect(d.calls()).toBe(1);
    d.settle({ userId: 7 });
    expect(await Promise.all(waiting)).toEqual(Array(8).fill(7));
    expect(await cache.resolve('b:alice', d.verify)).toBe(7);
    expect(d.calls()).toBe(1);
  });

  test('different credentials are verified separately', async () => {
    const cache = new AuthCache(60_000);
    const a = deferredVerify();
    const b = deferredVerify();
    const ra = cache.resolve('b:alice', a.verify);
    const rb = cache.resolve('b:bob', b.verify);
    a.settle({ userId: 1 });
    b.settle({ userId: 2 });
    expect([await ra, await rb]).toEqual([1, 2]);
    expect([a.calls(), b.calls()]).toEqual([1, 1]);
  });

  test('a refused credential is shared while under way but not remembered', async () => {
    const cache = new AuthCache(60_000);
    const d = deferredVerify();
    const waiting = [cache.resolve('b:mallory', d.verify), cache.resolve('b:mallory', d.verify)];
    d.settle(undefined);
    expect(await Promise.all(waiting)).toEqual([undefined, undefined]);
    const again = cache.resolve('b:mallory', d.verify);
    expect(d.calls()).toBe(2);
    d.settle(undefined);
    expect(await again).toBeUndefined();
  });

  test('a verification that fails (database down) fails for everyone waiting, and the next request tries again', async () => {
    const cache = new AuthCache(60_000);
    const d = deferredVerify();
    const waiting = [cache.resolve('t:x', d.verify), cache.resolve('t:x', d.verify)];
    d.fail(new Error('connection refused'));
    for (const w of waiting) await expect(w).rejects.toThrow('connection refused');
    const again = cache.resolve('t:x', d.verify);
    expect(d.calls()).toBe(2);
    d.settle({ userId: 3 });
    expect(await again).toBe(3);
  });

  test('a credential change during a verification: later requests verify anew, the old result is not remembered', async () => {
    const cache = new AuthCache(60_000);
    const before = deferredVerify();
    const old = cache.resolve('b:carol', before.verify);
    cache.clear();
    const after = deferredVerify();
    const fresh = cache.resolve('b:carol', after.verify);
    expect(after.calls()).toBe(1);
    before.settle({ userId: 5 });
    expect(await old).toBe(5);
    expect(cache.get('b:carol')).toBeUndefined();
    after.settle(undefined);
    expect(await fresh).toBeUndefined();
    expect(cache.get('b:carol')).toBeUndefined();
  });

  test('an expiring credential is remembered until it expires, at the latest', async () => {
    const cache = new AuthCache(60_000);
    expect(await cache.resolve('t:short', async () => ({ userId: 9, notAfter: Date.now() + 30 }))).toBe(9);
    expect(cache.get('t:short')).toBe(9);
    await new Promise((r) => setTimeout(r, 50));
    expect(cache.get('t:short')).toBeUndefined();
  });
});
