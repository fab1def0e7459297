import { politely } from '../../src/feeds/fetcher';
import type { FeedRow } from '../../src/feeds/repo';

// The fetcher's run of a batch of feeds: its limits, and what a failure does to the rest of the batch.

const feed = (host: string, n: number) => ({ feed_url: `https://${host}/${n}.xml` }) as FeedRow;
const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('at most `concurrency` at once and `perHost` at once per host; every feed is worked on', async () => {
  const feeds = [...[1, 2, 3, 4].map((n) => feed('a.example', n)), ...[1, 2].map((n) => feed('b.example', n))];
  let active = 0;
  let most = 0;
  const perHost = new Map<string, number>();
  let mostPerHost = 0;
  const done: string[] = [];
  await politely(feeds, { concurrency: 3, perHost: 2 }, async (f) => {
    const host = new URL(f.feed_url).host;
    active++;
    perHost.set(host, (perHost.get(host) ?? 0) + 1);
    most = Math.max(most, active);
    mostPerHost = Math.max(mostPerHost, perHost.get(host)!);
    await tick(5);
    active--;
    perHost.set(host, perHost.get(host)! - 1);
    done.push(f.feed_url);
  });
  expect(most).toBe(3);
  expect(mostPerHost).toBe(2);
  expect(done.sort()).toEqual(feeds.map((f) => f.feed_url).sort());
});

test('after a failure no other work starts, and the failure comes once those under way have ended', async () => {
  const feeds = [1, 2, 3, 4, 5, 6].map((n) => feed(`h${n}.example`, n));
  const started: number[] = [];
  const ended: number[] = [];
  const run = politely(feeds, { concurrency: 3, perHost: 1 }, async (f) => {
    const n = Number(/\/(\d+)\.xml$/.exec(f.feed_url)![1]);
    started.push(n);
    if (n === 1) throw new Error('the database is unreachable');
    await tick(30);
    ended.push(n);
  });
  await expect(run).rejects.toThrow('the database is unreachable');
  // The two under way when the first failed had ended; none was started after it.
  expect(started).toEqual([1, 2, 3]);
  expect(ended.sort()).toEqual([2, 3]);
  await tick(60);
  expect(started).toEqual([1, 2, 3]);
});
