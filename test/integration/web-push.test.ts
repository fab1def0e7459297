import crypto from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { backup } from '../../src/cli/backup-restore';
import http from 'node:http';
import type net from 'node:net';
import pino from 'pino';
import { fetchDueFeeds, fetcherSettings } from '../../src/feeds/fetcher';
import * as notifications from '../../src/notifications/service';
import { as, testApp, type TestApp } from '../helpers/app';
import { emptyDatabase } from '../helpers/db';
import { cliAsync } from '../helpers/process';
import { csrfOf, signedInAgent } from '../helpers/web';
import { feedServer } from '../helpers/feed-server';
import { tempDirForFile } from '../helpers/tmp';

// Web Push end to end on loopback: the test is the browser (a P-256 key pair and an auth secret, as
// PushManager.subscribe makes them) and its push service (an HTTP server); it decrypts the message the
// server sends (RFC 8291, aes128gcm) and checks its VAPID signature (RFC 8292).

const logger = pino({ level: 'silent' });
let t: TestApp;
let feed: Awaited<ReturnType<typeof feedServer>>;
const items: { guid: string; title: string }[] = [{ guid: 'p0', title: 'Old one' }];
const rss = () => `<?xml version="1.0"?><rss version="2.0"><channel><title>Pushed Radio</title>
  <image><url>https://art.example/pushed.jpg</url></image>
  ${items.map((i) => `<item><guid>${i.guid}</guid><title>${i.title}</title></item>`).join('')}</channel></rss>`;

type Push = { url: string | undefined; headers: http.IncomingHttpHeaders; body: Buffer };
const pushes: Push[] = [];
let answer = 201;
let push: http.Server;
let pushUrl: string;

beforeAll(async () => {
  t = await testApp({ FEED_FETCH_ALLOW_CIDRS: '127.0.0.0/8' });
  feed = await feedServer({ '/feed': (_req, res) => res.writeHead(200).end(rss()) });
  push = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      pushes.push({ url: req.url, headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(answer).end();
    });
  });
  await new Promise<void>((r) => push.listen(0, '127.0.0.1', r));
  pushUrl = `http://127.0.0.1:${(push.address() as net.AddressInfo).port}/push/browser-1`;
});
const tmp = tempDirForFile('castsync-web-push-');
afterAll(async () => {
  await feed.close();
  await new Promise((r) => push.close(r));
  await t.close();
});

/** A browser's public key, as PushManager.subscribe makes one: a point on P-256, base64url. */
const browserKey = () => crypto.createECDH('prime256v1').generateKeys().toString('base64url');

const hkdf = (salt: Buffer, ikm: Buffer, info: Buffer, length: number) =>
  Buffer.from(crypto.hkdfSync('sha256', ikm, salt, info, length));

/** RFC 8291 §3.4 and RFC 8188: the plaintext of an aes128gcm body, as the browser decrypts it. */
function decrypt(body: Buffer, browser: crypto.ECDH, authSecret: Buffer): string {
  const salt = body.subarray(0, 16);
  const idLength = body[20]!;
  const serverKey = body.subarray(21, 21 + idLength);
  const ciphertext = body.subarray(21 + idLength);
  const shared = browser.computeSecret(serverKey);
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), browser.getPublicKey(), serverKey]);
  const ikm = hkdf(authSecret, shared, keyInfo, 32);
  const cek = hkdf(salt, ikm, Buffer.from('Content-Encoding: aes128gcm\0'), 16);
  const nonce = hkdf(salt, ikm, Buffer.from('Content-Encoding: nonce\0'), 12);
  const decipher = crypto.createDecipheriv('aes-128-gcm', cek, nonce);
  decipher.setAuthTag(ciphertext.subarray(ciphertext.length - 16));
  const padded = Buffer.concat([decipher.update(ciphertext.subarray(0, ciphertext.length - 16)), decipher.final()]);
  // The last record ends with the delimiter 2, then zeros.
  const end = padded.lastIndexOf(2);
  return padded.subarray(0, end).toString('utf8');
}

/** RFC 8292: the Authorization header's JWT, signed by the key it names; returns its claims. */
function vapidClaims(header: string, expectedKey: string): { aud: string; sub: string; exp: number } {
  const m = /^vapid t=([^,]+), k=(.+)$/.exec(header)!;
  expect(m[2]).toBe(expectedKey);
  const [h, p, s] = m[1]!.split('.');
  const point = Buffer.from(expectedKey, 'base64url');
  const key = crypto.createPublicKey({
    key: {
      kty: 'EC',
      crv: 'P-256',
      x: point.subarray(1, 33).toString('base64url'),
      y: point.subarray(33).toString('base64url'),
    },
    format: 'jwk',
  });
  const signed = crypto.verify(
    'sha256',
    Buffer.from(`${h}.${p}`),
    { key, dsaEncoding: 'ieee-p1363' },
    Buffer.from(s!, 'base64url'),
  );
  expect(signed).toBe(true);
  return JSON.parse(Buffer.from(p!, 'base64url').toString()) as { aud: string; sub: string; exp: number };
}

async function fetchAndDeliver() {
  await t.db.query('UPDATE feeds SET next_fetch_at = now()');
  await fetchDueFeeds({ db: t.db, logger, newItems: notifications.newItemsHook }, fetcherSettings(t.config));
  return notifications.deliverDue({ db: t.db, logger }, notifications.deliverySettings(t.config));
}

test('a new episode reaches the browser as a Web Push message it decrypts to the title; a 410 removes the browser', async () => {
  const u = await t.user('pushed');
  await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: feed.url('/feed') }] });
  await fetchAndDeliver(); // the feed's first fetch: nothing
  const browser = crypto.createECDH('prime256v1');
  browser.generateKeys();
  const authSecret = crypto.randomBytes(16);
  const keys = { p256dh: browser.getPublicKey().toString('base64url'), auth: authSecret.toString('base64url') };
  const policy = fetcherSettings(t.config).policy;
  await notifications.addBrowser(t.db, u.id, { endpoint: pushUrl, keys }, policy);
  expect((await as(t, u).get('/v1/account/settings')).body.notifications.browsers).toBe(1);

  items.push({ guid: 'p1', title: 'Fresh from the push service' });
  expect(await fetchAndDeliver()).toBe(1);
  expect(pushes).toHaveLength(1);
  const got = pushes[0]!;
  expect(got.headers['content-encoding']).toBe('aes128gcm');
  expect(Number(got.headers.ttl)).toBeGreaterThan(0);
  const claims = vapidClaims(String(got.headers.authorization), await notifications.vapidPublicKey(t.db));
  expect(claims.aud).toBe(new URL(pushUrl).origin);
  expect(claims.sub).toMatch(/^(mailto:|https:)/);
  const message = JSON.parse(decrypt(got.body, browser, authSecret));
  expect(message).toMatchObject({
    title: 'New episode of Pushed Radio',
    body: 'Fresh from the push service',
    url: expect.stringMatching(/^\/web\/episodes\/\d+$/),
  });

  answer = 410;
  items.push({ guid: 'p2', title: 'Nobody listens there any more' });
  expect(await fetchAndDeliver()).toBe(1);
  expect(pushes).toHaveLength(2);
  const left = await t.db.query('SELECT 1 FROM push_subscriptions WHERE user_id = $1', [u.id]);
  expect(left.rowCount).toBe(0);
  const states = await t.db.query('SELECT status FROM notification_deliveries WHERE user_id = $1 ORDER BY created_at', [
    u.id,
  ]);
  expect(states.rows.map((r) => r.status)).toEqual(['sent', 'gone']);
});

test('the VAPID key pair is made once and kept in the database', async () => {
  const first = await notifications.vapidPublicKey(t.db);
  expect(Buffer.from(first, 'base64url')).toHaveLength(65);
  expect(await notifications.vapidPublicKey(t.db)).toBe(first);
  const kept = await t.db.query('SELECT public_key FROM vapid_keys');
  expect(kept.rows).toEqual([{ public_key: first }]);
});

test("the VAPID key pair and the browsers' subscriptions come back with a restored backup", async () => {
  const key = await notifications.vapidPublicKey(t.db);
  const u = await t.user('restored');
  const keys = { p256dh: browserKey(), auth: Buffer.alloc(16, 1).toString('base64url') };
  await notifications.addBrowser(
    t.db,
    u.id,
    { endpoint: pushUrl.replace('browser-1', 'kept'), keys },
    fetcherSettings(t.config).policy,
  );
  const file = path.join(mkdtempSync(path.join(tmp, 'vapid-')), 'castsync.backup');
  await backup(t.url, file);
  const target = await emptyDatabase();
  try {
    // The restore as an operator runs it (the built CLI): it migrates, which jest's module loader cannot.
    const ran = await cliAsync(['restore', file], { DATABASE_URL: target.url });
    expect(ran.stderr).toBe('');
    expect(ran.status).toBe(0);
    const restored = new pg.Client({ connectionString: target.url });
    await restored.connect();
    try {
      const kept = await restored.query('SELECT public_key, private_key FROM vapid_keys');
      expect(kept.rows).toEqual((await t.db.query('SELECT public_key, private_key FROM vapid_keys')).rows);
      expect(kept.rows[0].public_key).toBe(key);
      const browsers = await restored.query('SELECT endpoint FROM push_subscriptions WHERE user_id = $1', [u.id]);
      expect(browsers.rows).toEqual([{ endpoint: pushUrl.replace('browser-1', 'kept') }]);
    } finally {
      await restored.end();
    }
  } finally {
    await target.drop();
  }
});

test('a browser subscription with a private endpoint or keys of the wrong size is refused', async () => {
  const u = await t.user('refused');
  const strict = fetcherSettings({ ...t.config, feedFetchAllowCidrs: [] }).policy;
  const keys = { p256dh: browserKey(), auth: Buffer.alloc(16).toString('base64url') };
  await expect(
    notifications.addBrowser(t.db, u.id, { endpoint: 'http://10.1.2.3/push', keys }, strict),
  ).rejects.toThrow(/private/);
  await expect(
    notifications.addBrowser(
      t.db,
      u.id,
      { endpoint: 'https://push.example/x', keys: { ...keys, auth: 'short' } },
      strict,
    ),
  ).rejects.toThrow(/auth/);
});

test('a person keeps at most MAX_BROWSERS browsers: one added past it makes the oldest forgotten', async () => {
  const [u, other] = [await t.user('many-browsers'), await t.user('one-browser')];
  const policy = notifications.deliverySettings(t.config).policy;
  const add = (userId: number, n: number) =>
    notifications.addBrowser(
      t.db,
      userId,
      { endpoint: `${pushUrl}-${n}`, keys: { p256dh: browserKey(), auth: Buffer.alloc(16, 1).toString('base64url') } },
      policy,
    );
  await add(other.id, 0);
  for (let n = 1; n <= notifications.MAX_BROWSERS + 2; n++) await add(u.id, n);
  // The same browser again (its keys renewed) is no new one.
  await add(u.id, notifications.MAX_BROWSERS + 2);
  const endpoints = await t.db.query<{ endpoint: string }>(
    'SELECT endpoint FROM push_subscriptions WHERE user_id = $1 ORDER BY id',
    [u.id],
  );
  expect(endpoints.rows.map((r) => r.endpoint)).toEqual(
    Array.from({ length: notifications.MAX_BROWSERS }, (_, i) => `${pushUrl}-${i + 3}`),
  );
  expect(await notifications.browserCount(t.db, other.id)).toBe(1);
});

test('a browser key of the right size that is not a point on P-256 is refused when it is added', async () => {
  const u = await t.user('off-curve');
  const { agent } = await signedInAgent(t.app, u.name, u.password);
  const page = await agent.get('/web/account');
  const point = Buffer.from(browserKey(), 'base64url');
  const hybrid = crypto.ECDH.convertKey(point, 'prime256v1', undefined, undefined, 'hybrid') as Buffer;
  const refused = [
    Buffer.concat([Buffer.from([4]), Buffer.alloc(64)]), // base64url of 65 bytes, the size of a point
    Buffer.alloc(65, 4),
    hybrid, // the hybrid form, 65 bytes too: RFC 8291 asks for the uncompressed one
  ];
  for (const key of refused) {
    const added = await agent
      .post('/web/account/browsers')
      .type('form')
      .send({
        _csrf: csrfOf(page.text),
        endpoint: pushUrl.replace('browser-1', 'off-curve'),
        p256dh: key.toString('base64url'),
        auth: Buffer.alloc(16, 1).toString('base64url'),
      });
    expect(added.status).toBe(400);
    expect(added.text).toContain('keys.p256dh must be a point on P-256');
  }
  expect((await as(t, u).get('/v1/account/settings')).body.notifications.browsers).toBe(0);
});

test("a browser whose key is not on P-256, kept from before, fails its delivery; other people's are sent", async () => {
  answer = 201;
  pushes.length = 0;
  const [kept, other] = [await t.user('kept-off-curve'), await t.user('on-curve')];
  const policy = fetcherSettings(t.config).policy;
  for (const u of [kept, other]) {
    await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: feed.url('/feed') }] });
    const keys = { p256dh: browserKey(), auth: Buffer.alloc(16, 3).toString('base64url') };
    await notifications.addBrowser(t.db, u.id, { endpoint: pushUrl.replace('browser-1', u.name), keys }, policy);
  }
  await fetchAndDeliver();
  // As a browser added before such keys were refused had it.
  const offCurve = Buffer.concat([Buffer.from([4]), Buffer.alloc(64)]).toString('base64url');
  await t.db.query('UPDATE push_subscriptions SET p256dh = $2 WHERE user_id = $1', [kept.id, offCurve]);
  items.push({ guid: 'p-kept', title: 'For everyone who can hear it' });
  expect(await fetchAndDeliver()).toBe(2);
  expect(pushes).toHaveLength(1);
  const rows = await t.db.query(
    'SELECT user_id, status, attempts FROM notification_deliveries WHERE user_id = ANY($1::bigint[]) ORDER BY status',
    [[kept.id, other.id]],
  );
  expect(rows.rows).toEqual([
    { user_id: kept.id, status: 'failed', attempts: 1 },
    { user_id: other.id, status: 'sent', attempts: 1 },
  ]);
  // The browser is kept: a failed delivery is not a push service saying that it is gone.
  expect((await as(t, kept).get('/v1/account/settings')).body.notifications.browsers).toBe(1);
});

test('all notifications turned off: a push waiting for its retry is not sent, and the browser is kept', async () => {
  answer = 503;
  const u = await t.user('turned-off');
  const policy = fetcherSettings(t.config).policy;
  await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: feed.url('/feed') }] });
  const keys = { p256dh: browserKey(), auth: Buffer.alloc(16, 5).toString('base64url') };
  await notifications.addBrowser(t.db, u.id, { endpoint: pushUrl.replace('browser-1', u.name), keys }, policy);
  await fetchAndDeliver();
  items.push({ guid: 'p-off', title: 'Sent while they still wanted it' });
  await fetchAndDeliver();
  const toThem = () => pushes.filter((p) => p.url === `/push/${u.name}`);
  expect(toThem()).toHaveLength(1); // answered 503: to be tried again
  await notifications.setNotificationSettings(t.db, u.id, { enabled: false }, policy);
  answer = 201;
  await t.db.query('UPDATE notification_deliveries SET next_at = now() WHERE user_id = $1', [u.id]);
  await fetchAndDeliver();
  expect(toThem()).toHaveLength(1);
  const rows = await t.db.query('SELECT status, attempts FROM notification_deliveries WHERE user_id = $1', [u.id]);
  expect(rows.rows).toEqual([{ status: 'gone', attempts: 2 }]);
  expect((await as(t, u).get('/v1/account/settings')).body.notifications.browsers).toBe(1);
});

test('five long titles are cut to what a push service takes: one record of at most 4,096 bytes, which decrypts', async () => {
  answer = 201;
  const u = await t.user('long-titles');
  const policy = fetcherSettings(t.config).policy;
  await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: feed.url('/feed') }] });
  const browser = crypto.createECDH('prime256v1');
  browser.generateKeys();
  const authSecret = crypto.randomBytes(16);
  const keys = { p256dh: browser.getPublicKey().toString('base64url'), auth: authSecret.toString('base64url') };
  await notifications.addBrowser(t.db, u.id, { endpoint: pushUrl.replace('browser-1', u.name), keys }, policy);
  await fetchAndDeliver();
  // Titles of 1,000 characters (the most a feed's title is kept to), 3 bytes each in UTF-8.
  const long = (k: number) => `${k} ${'ポッドキャスト'.repeat(150)}`.slice(0, 1000);
  for (let k = 1; k <= 5; k++) items.push({ guid: `p-long-${k}`, title: long(k) });
  await fetchAndDeliver();
  const got = pushes.filter((p) => p.url === `/push/${u.name}`);
  expect(got).toHaveLength(1);
  expect(got[0]!.body.length).toBeLessThanOrEqual(4096);
  const message = JSON.parse(decrypt(got[0]!.body, browser, authSecret));
  expect(message.title).toBe('5 new episodes of Pushed Radio');
  expect(message.body.startsWith(long(1).slice(0, 100))).toBe(true);
  expect(message.body.endsWith('…')).toBe(true);
  expect(message.icon).toBe('https://art.example/pushed.jpg');
  const rows = await t.db.query('SELECT status FROM notification_deliveries WHERE user_id = $1', [u.id]);
  expect(rows.rows).toEqual([{ status: 'sent' }]);
});

test("the account page's script adds this browser and takes it away again; another person has none", async () => {
  const u = await t.user('webpush');
  const { agent } = await signedInAgent(t.app, u.name, u.password);
  const page = await agent.get('/web/account');
  expect(page.text).toContain(`data-key="${await notifications.vapidPublicKey(t.db)}"`);
  expect(page.text).toContain('0 browsers are set to show notifications');
  const endpoint = pushUrl.replace('browser-1', 'web-page');
  const fields = {
    _csrf: csrfOf(page.text),
    endpoint,
    p256dh: browserKey(),
    auth: Buffer.alloc(16, 2).toString('base64url'),
  };
  expect(
    (
      await agent
        .post('/web/account/browsers')
        .type('form')
        .send({ ...fields, _csrf: 'forged' })
    ).status,
  ).toBe(403);
  expect((await agent.post('/web/account/browsers').type('form').send(fields)).status).toBe(204);
  expect((await agent.get('/web/account')).text).toContain('1 browser is set to show notifications');
  const other = await t.user('webpush');
  expect((await as(t, other).get('/v1/account/settings')).body.notifications.browsers).toBe(0);
  const removed = await agent.post('/web/account/browsers/remove').type('form').send({ _csrf: fields._csrf, endpoint });
  expect(removed.status).toBe(204);
  expect((await as(t, u).get('/v1/account/settings')).body.notifications.browsers).toBe(0);
});

test('signing out forgets the browsers that turned notifications on in that session, and no other', async () => {
  const u = await t.user('signs-out');
  const [shared, own] = [
    await signedInAgent(t.app, u.name, u.password),
    await signedInAgent(t.app, u.name, u.password),
  ];
  const add = (a: typeof shared, name: string) =>
    a.agent
      .post('/web/account/browsers')
      .type('form')
      .send({
        _csrf: a.csrf,
        endpoint: pushUrl.replace('browser-1', name),
        p256dh: browserKey(),
        auth: Buffer.alloc(16, 3).toString('base64url'),
      });
  expect((await add(shared, 'library-computer')).status).toBe(204);
  expect((await add(own, 'own-phone')).status).toBe(204);
  // One added without a web session (kept from before this was recorded).
  const keys = { p256dh: browserKey(), auth: Buffer.alloc(16, 4).toString('base64url') };
  const policy = fetcherSettings(t.config).policy;
  await notifications.addBrowser(t.db, u.id, { endpoint: pushUrl.replace('browser-1', 'older'), keys }, policy);
  expect((await shared.agent.post('/web/sign-out').type('form').send({ _csrf: shared.csrf })).status).toBe(303);
  const left = await t.db.query<{ endpoint: string }>(
    'SELECT endpoint FROM push_subscriptions WHERE user_id = $1 ORDER BY id',
    [u.id],
  );
  expect(left.rows.map((r) => r.endpoint.split('/').pop())).toEqual(['own-phone', 'older']);
});
