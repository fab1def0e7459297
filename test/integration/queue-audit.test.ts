import { as, testApp, type TestApp, type TestUser } from '../helpers/app';

// Up next under edits from several devices (docs/queue.md): a list read and written back keeps its items,
// and `If-Match: *` replaces whatever is there.

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

const podcast_url = 'https://audit.example/feed';
const ep = (n: number) => ({ podcast_url, enclosure_url: `https://audit.example/${n}.mp3` });
type Item = { id: string; sync_id: string; enclosure_url: string };
const read = async (u: TestUser) => {
  const r = await as(t, u).get('/v1/queue');
  return { etag: r.headers.etag as string, items: r.body.items as Item[] };
};

test('a list written back by the sync ids it was read with keeps every item, reordered', async () => {
  const u = await t.user();
  for (const n of [1, 2, 3]) expect((await as(t, u).post('/v1/queue/items', ep(n))).status).toBe(201);
  const before = await read(u);
  const reordered = [...before.items].reverse();
  const r = await as(t, u)
    .put('/v1/queue')
    .set('If-Match', before.etag)
    .send({ items: reordered.map((i) => ({ sync_id: i.sync_id })) });
  expect(r.status).toBe(200);
  expect(r.body.failure).toEqual([]);
  expect((r.body.items as Item[]).map((i) => i.id)).toEqual(reordered.map((i) => i.id));
});

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

test('an item added again by the sync id the list gives it moves, keeping its id, like a list written back', async () => {
  const u = await t.user();
  for (const n of [1, 2, 3]) expect((await as(t, u).post('/v1/queue/items', ep(n))).status).toBe(201);
  const before = await read(u);
  const last = before.items[2]!;
  const r = await as(t, u).post('/v1/queue/items', { sync_id: last.sync_id.toUpperCase(), at: 'next' });
  expect(r.status).toBe(201);
  expect(r.body.id).toBe(last.id);
  expect((r.body.items as Item[]).map((i) => i.id)).toEqual([last.id, before.items[0]!.id, before.items[1]!.id]);
  expect(r.headers.etag).not.toBe(before.etag);
});

describe('conditional requests (RFC 9110 §13.1)', () => {
  // Enough items for an answer to be compressed, whose ETag is then weak (W/"n"), as a proxy's would be.
  const filled = async () => {
    const u = await t.user();
    for (const n of [1, 2, 3, 4, 5, 6, 7, 8]) await as(t, u).post('/v1/queue/items', ep(n));
    const r = await as(t, u).get('/v1/queue').set('Accept-Encoding', 'gzip');
    expect(r.headers['content-encoding']).toBe('gzip');
    const weak = r.headers.etag as string;
    expect(weak).toMatch(/^W\/"\d+"$/);
    return { u, weak, strong: weak.slice(2) };
  };

  test('GET: If-None-Match with the weak ETag, a list holding it, or * is a 304, asked past any cache too', async () => {
    const { u, weak, strong } = await filled();
    const get = (inm: string, cc?: string) => {
      const r = as(t, u).get('/v1/queue').set('If-None-Match', inm);
      return cc ? r.set('Cache-Control', cc) : r;
    };
    for (const inm of [strong, weak, `"0", ${weak}`, `W/"x,y", ${strong}`, '*']) {
      for (const cc of [undefined, 'no-cache']) {
        const r = await get(inm, cc);
        expect({ inm, cc, status: r.status, etag: r.headers.etag }).toEqual({ inm, cc, status: 304, etag: strong });
      }
    }
    for (const inm of ['"0"', 'W/"0"', `"0", W/"1"`, strong.replace('"', "'"), 'W/']) {
      expect({ inm, status: (await get(inm, 'no-cache')).status }).toEqual({ inm, status: 200 });
    }
  });

  test('PUT: If-Match with a list holding the ETag read replaces the list; one with none of it is a 412', async () => {
    const { u, strong } = await filled();
    const put = (im: string) =>
      as(t, u)
        .put('/v1/queue')
        .set('If-Match', im)
        .send({ items: [ep(9)] });
    expect((await put(`"0", W/"1"`)).status).toBe(412);
    expect((await put(`"0", ${strong}`)).status).toBe(200);
    // The weak ETag of a compressed answer names the same version of the list (docs/queue.md).
    const again = (await as(t, u).get('/v1/queue').set('Accept-Encoding', 'identity')).headers.etag as string;
    expect((await put(`W/${again}`)).status).toBe(200);
  });
});
