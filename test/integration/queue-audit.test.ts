import { as, testApp, type TestApp } from '../helpers/app';

// Up next under edits from several devices (docs/queue.md): a list read and written back keeps its items,
// and `If-Match: *` replaces whatever is there.

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

const podcast_url = 'https://audit.example/feed';
const ep = (n: number) => ({ podcast_url, enclosure_url: `https://audit.example/${n}.mp3` });
test('If-Match: * replaces whatever is there, whatever another device writes meanwhile', async () => {
  const u = await t.user();
  await as(t, u).post('/v1/queue/items', ep(0));
  const statuses: number[] = [];
  for (let round = 0; round < 10; round++) {
    const [put] = await Promise.all([
      as(t, u)
        .put('/v1/queue')
        .set('If-Match', '*')
        .send({ items: [ep(100 + round)] }),
      ...[1, 2, 3].map((n) => as(t, u).post('/v1/queue/items', ep(10 * round + n))),
    ]);
    statuses.push(put.status);
  }
  expect(statuses.filter((s) => s !== 200)).toEqual([]);
});
