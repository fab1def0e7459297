import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import express from 'express';
import { chooseEncoding, compression } from '../../src/http/compression';
import { sendStreamed } from '../../src/http/stream';

test.each([
  [undefined, undefined],
  ['', undefined],
  ['gzip', 'gzip'],
  ['gzip, deflate, br', 'br'],
  ['br;q=0.5, gzip', 'gzip'],
  ['GZIP;Q=0.8', 'gzip'],
  ['gzip;q=0', undefined],
  ['br;q=0, gzip;q=0', undefined],
  ['deflate', undefined],
  ['identity', undefined],
  ['gzip;q=0.5, identity', undefined],
  ['identity;q=0.5, gzip', 'gzip'],
  ['*', 'br'],
  ['*;q=0.3, gzip;q=0', 'br'],
  ['gzip;q=nonsense', undefined],
])('Accept-Encoding %p: %p', (header, expected) => {
  expect(chooseEncoding(header)).toBe(expected);
});

type Answer = { status: number; headers: http.IncomingHttpHeaders; body: Buffer };

/** An app of one route behind the compression, and a raw GET of it (the body not decoded). */
async function serve(
  handler: express.RequestHandler,
  use: (get: (headers: Record<string, string>) => Promise<Answer>, req: () => http.ClientRequest) => Promise<void>,
) {
  const app = express();
  app.set('etag', false);
  app.use(compression(true, 1400));
  app.get('/', handler);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const { port } = server.address() as AddressInfo;
  const get = (headers: Record<string, string>) =>
    new Promise<Answer>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path: '/', headers, agent: false }, (res) => {
          const parts: Buffer[] = [];
          res.on('data', (d: Buffer) => parts.push(d));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(parts) }));
        })
        .on('error', reject);
    });
  try {
    await use(get, () => http.get({ host: '127.0.0.1', port, path: '/', headers: { 'accept-encoding': 'gzip' } }));
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

const TEXT = 'an answer long enough to be worth compressing; '.repeat(100);

test('a strong ETag is made weak when the body is compressed, kept when it is not', async () => {
  await serve(
    (_req, res) => {
      res.set('ETag', '"v1"').type('text').send(TEXT);
    },
    async (get) => {
      const gz = await get({ 'accept-encoding': 'gzip' });
      expect(gz.headers['content-encoding']).toBe('gzip');
      expect(gz.headers.etag).toBe('W/"v1"');
      expect(zlib.gunzipSync(gz.body).toString()).toBe(TEXT);
      const plain = await get({});
      expect(plain.headers.etag).toBe('"v1"');
      expect(plain.body.toString()).toBe(TEXT);
    },
  );
});

test.each([
  ['already encoded', (res: express.Response) => res.set('Content-Encoding', 'zstd').type('application/zstd')],
  ['no-transform', (res: express.Response) => res.set('Cache-Control', 'no-transform').type('text')],
  ['an archive type', (res: express.Response) => res.type('application/gzip')],
  ['a 206', (res: express.Response) => res.status(206).type('text')],
])('%s: sent as it is', async (_name, prepare) => {
  await serve(
    (_req, res) => {
      prepare(res).send(Buffer.from(TEXT));
    },
    async (get) => {
      const r = await get({ 'accept-encoding': 'gzip, br' });
      expect(r.headers['content-encoding'] ?? 'none').not.toMatch(/gzip|br/);
      expect(r.body.toString()).toBe(TEXT);
    },
  );
});

test('a streamed answer waits for a client that does not read, then arrives whole', async () => {
  const PIECES = 400;
  let made = 0;
  async function* pieces() {
    // 64 KiB of text that compresses little: the socket fills as fast as the pieces come.
    for (; made < PIECES; made++) yield randomBytes(48 * 1024).toString('base64');
  }
  await serve(
    async (_req, res) => {
      res.type('text');
      await sendStreamed(res, pieces());
    },
    async (_get, req) => {
      const res = await new Promise<http.IncomingMessage>((resolve) => req().once('response', resolve));
      res.pause();
      // Wait until the writer stops being asked for more.
      for (let last = -1; last !== made;) {
        last = made;
        await new Promise((r) => setTimeout(r, 300));
      }
      expect(made).toBeLessThan(PIECES / 2);
      const gunzip = res.pipe(zlib.createGunzip());
      let length = 0;
      for await (const d of gunzip) length += (d as Buffer).length;
      expect(length).toBe(PIECES * 64 * 1024);
      expect(made).toBe(PIECES);
    },
  );
});
