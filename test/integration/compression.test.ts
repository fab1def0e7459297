import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { DOWNLOAD_PAGE, record, type EpisodeAction } from '../../src/episodes/service';
import { testApp, type TestApp, type TestUser } from '../helpers/app';

// Answers are compressed for clients that accept it (src/http/compression.ts): the apps' HTTP libraries
// (OkHttp sends `Accept-Encoding: gzip`), browsers (br too); never for a client that sends none
// (mygpoclient), nor for tiny answers. Read here as the bytes on the wire, decoded by hand.

const OKHTTP = { 'accept-encoding': 'gzip', 'user-agent': 'okhttp/4.12.0' };

type Raw = { status: number; headers: http.IncomingHttpHeaders; body: Buffer };

/** A request over a real socket, its body as it came (not decoded). */
async function raw(t: TestApp, path: string, headers: Record<string, string>, method = 'GET'): Promise<Raw> {
  const server = t.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    const { port } = server.address() as AddressInfo;
    return await new Promise<Raw>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, path, method, headers, agent: false }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(parts) }));
        res.on('error', reject);
      });
      req.on('error', reject).end();
    });
  } finally {
    server.close();
  }
}

const play = (n: number): EpisodeAction => ({
  podcastUrl: `https://zip-${n % 3}.example/feed.xml`,
  episodeUrl: `https://zip.example/${n}.mp3`,
  action: 'play',
  at: new Date(Date.UTC(2026, 0, 1) + n * 1000),
  position: n,
  total: 3600,
});
const TOTAL = 2 * DOWNLOAD_PAGE + 7;

/** A user whose full download is streamed (more than a page). */
async function userWithPlays(t: TestApp): Promise<TestUser> {
  const u = await t.user('zip');
  await record(
    t.db,
    u.id,
    Array.from({ length: TOTAL }, (_, k) => play(k + 1)),
  );
  return u;
}
const download = (u: TestUser) => `/api/2/episodes/${u.name}.json?since=0`;
const actionsOf = (body: Buffer) => (JSON.parse(body.toString('utf8')) as { actions: unknown[] }).actions;

describe('compression on', () => {
  let t: TestApp;
  let u: TestUser;
  let plain: Raw;
  beforeAll(async () => {
    t = await testApp();
    u = await userWithPlays(t);
    // mygpoclient sends no Accept-Encoding: the answer as it is.
    plain = await raw(t, download(u), { authorization: u.basic, 'user-agent': 'mygpoclient/1.9' });
  });
  afterAll(() => t.close());

  test('no Accept-Encoding: the streamed download as it is, saying it varies', () => {
    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toMatch(/accept-encoding/i);
    expect(actionsOf(plain.body)).toHaveLength(TOTAL);
  });

  test("OkHttp's headers: the streamed download in gzip, which decodes to the same actions", async () => {
    const r = await raw(t, download(u), { ...OKHTTP, authorization: u.basic });
    expect(r.status).toBe(200);
    expect(r.headers['content-encoding']).toBe('gzip');
    expect(r.headers['content-length']).toBeUndefined();
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(r.headers.vary).toMatch(/accept-encoding/i);
    expect(actionsOf(zlib.gunzipSync(r.body))).toEqual(actionsOf(plain.body));
    expect(r.body.length).toBeLessThan(plain.body.length / 4);
  });

  test('brotli, preferred when a browser accepts both, decodes to the same actions', async () => {
    const r = await raw(t, download(u), { 'accept-encoding': 'gzip, deflate, br', authorization: u.basic });
    expect(r.headers['content-encoding']).toBe('br');
    expect(actionsOf(zlib.brotliDecompressSync(r.body))).toEqual(actionsOf(plain.body));
  });

  test('q-values: gzip;q=0 is refused, identity preferred is kept, the higher q wins', async () => {
    const encodingFor = async (accept: string) =>
      (await raw(t, download(u), { 'accept-encoding': accept, authorization: u.basic })).headers['content-encoding'];
    expect(await encodingFor('gzip;q=0')).toBeUndefined();
    expect(await encodingFor('gzip;q=0.5, identity')).toBeUndefined();
    expect(await encodingFor('br;q=0.4, gzip;q=0.9')).toBe('gzip');
  });

  test('a tiny answer goes as it is, with its length', async () => {
    const nothing = encodeURIComponent('https://nothing.example/feed.xml');
    const r = await raw(t, `/api/2/episodes/${u.name}.json?since=0&podcast=${nothing}`, {
      ...OKHTTP,
      authorization: u.basic,
    });
    expect(r.headers['content-encoding']).toBeUndefined();
    expect(r.headers['content-length']).toBe(String(r.body.length));
    expect(JSON.parse(r.body.toString('utf8'))).toMatchObject({ actions: [] });
  });

  test('a web page goes as it is (its CSRF token beside echoed input: BREACH), its stylesheet compressed', async () => {
    const page = await raw(t, '/?next=%2Fweb%2Fnew', { 'accept-encoding': 'gzip, br' });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-encoding']).toBeUndefined();
    expect(page.body.length).toBeGreaterThan(1400);
    expect(page.body.toString('utf8')).toContain('<form');
    const css = await raw(t, '/static/style.css', { 'accept-encoding': 'gzip, br' });
    expect(css.headers['content-encoding']).toBe('br');
  });

  test('HEAD is not compressed', async () => {
    const r = await raw(t, '/static/style.css', OKHTTP, 'HEAD');
    expect(r.status).toBe(200);
    expect(r.headers['content-encoding']).toBeUndefined();
  });

  test('static text is compressed with a weak ETag that still revalidates; an image is not', async () => {
    const css = await raw(t, '/static/style.css', { 'accept-encoding': 'br' });
    expect(css.headers['content-encoding']).toBe('br');
    expect(css.headers.etag).toMatch(/^W\//);
    const again = await raw(t, '/static/style.css', { 'accept-encoding': 'br', 'if-none-match': css.headers.etag! });
    expect(again.status).toBe(304);
    const png = await raw(t, '/static/icon-512.png', { 'accept-encoding': 'gzip, br' });
    expect(png.status).toBe(200);
    expect(png.headers['content-encoding']).toBeUndefined();
  });
});

test('COMPRESSION=false: every answer as it is, whatever the client accepts', async () => {
  const t = await testApp({ COMPRESSION: 'false' });
  try {
    const u = await userWithPlays(t);
    const r = await raw(t, download(u), { ...OKHTTP, authorization: u.basic });
    expect(r.status).toBe(200);
    expect(r.headers['content-encoding']).toBeUndefined();
    expect(r.headers.vary).toBeUndefined();
    expect(actionsOf(r.body)).toHaveLength(TOTAL);
  } finally {
    await t.close();
  }
});
