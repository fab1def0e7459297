import net from 'node:net';
import pino from 'pino';
import { createApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import { NOT_HAD } from '../../src/feeds/document-policy';
import { BUSY, MAX_BYTES } from '../../src/feeds/documents';
import { fetchDueFeeds, fetcherSettings } from '../../src/feeds/fetcher';
import { as, testApp, type TestApp, type TestUser } from '../helpers/app';
import { feedServer, xml } from '../helpers/feed-server';
import { capturedLogger } from '../helpers/logs';
import { signedInAgent } from '../helpers/web';

// Chapters and transcripts: the fetcher keeps what each item declares (podcast:chapters, Podlove chapters
// inline, podcast:transcript); the web page fetches a document when it is first asked for, under the
// fetcher's address policy and caps, keeps it with the item and serves it from castsync's origin. A loopback
// feed server serves the feeds and the documents, allowed as a home network would be; a second app, with
// the default policy, shows loopback refused as it is for feeds, and a kept copy refused with it. A
// document is read only when served as its kind; the person is told only that it could not be had, the
// log why.

let t: TestApp;
let server: Awaited<ReturnType<typeof feedServer>>;
let showServer: Awaited<ReturnType<typeof feedServer>>;
const captured = capturedLogger('warn');
/** The app's own log, where the reason a document could not be had is written. */
const appLog = capturedLogger('info');
const reasons = () => appLog.lines.filter((l) => l.msg === 'item document not had').map((l) => String(l.reason));
const LOOPBACK = { FEED_FETCH_ALLOW_CIDRS: '127.0.0.0/8' };
const settings = fetcherSettings(loadConfig(LOOPBACK, { dotenvFile: false }));
const fetchAll = async (app = t) => {
  await app.db.query('UPDATE feeds SET next_fetch_at = now()');
  return fetchDueFeeds({ db: app.db, logger: captured.logger }, settings);
};

const CHAPTERS = JSON.stringify({
  version: '1.2.0',
  chapters: [
    { startTime: 120.5, title: 'The <b>middle</b>', url: 'https://example.org/middle' },
    { startTime: 0, title: 'Start', url: 'javascript:alert(1)' },
    { startTime: 60, title: 'Hidden', toc: false },
    { startTime: 'soon', title: 'No time' },
    { startTime: 300, title: 'End' },
  ],
});
const VTT = `WEBVTT

NOTE a comment to skip

1
00:00:00.000 --> 00:00:04.000
<v Alice>Hello and welcome &amp; all.

00:00:04.000 --> 00:00:09.500 align:start
<v Bob>Thanks, <i>Alice</i>.
`;
const SRT = `1\r\n00:00:01,000 --> 00:00:02,500\r\nFirst line\r\n\r\n2\r\n00:01:02,000 --> 00:01:04,000\r\nSecond line\r\n`;
const JSON_TRANSCRIPT = JSON.stringify({
  version: '1.0.0',
  segments: [
    { speaker: 'Ann', startTime: 0.5, endTime: 0.9, body: 'Good' },
    { speaker: 'Ann', startTime: 0.9, endTime: 1.4, body: 'morning.' },
    { speaker: 'Ben', startTime: 2, endTime: 3, body: 'Hi.' },
  ],
});
const HTML = `<html><body><cite>Ann:</cite><time>0:00</time><p>One <b>bold</b> word.</p>
<cite>Ben:</cite><time>1:05</time><p>Two &amp; three.</p><p>Unclosed <p>`;

const item = (n: number, extra: string) =>
  `<item><guid>ep-${n}</guid><title>Episode ${n}</title><pubDate>Mon, 0${n} Jan 2024 10:00:00 GMT</pubDate>
     <enclosure url="https://media.example.org/${n}.mp3" type="audio/mpeg"/>${extra}</item>`;
const titled = (title: string, extra: string) =>
  `<item><guid>${title}</guid><title>${title}</title>
     <enclosure url="https://media.example.org/${title}.mp3" type="audio/mpeg"/>${extra}</item>`;
const feed = (items: string) => `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0" xmlns:psc="http://podlove.org/simple-chapters">
<channel><title>Chaptered Show</title>${items}</channel></rss>`;

let u: TestUser;
let web: Awaited<ReturnType<typeof signedInAgent>>;
const idOf = async (title: string) =>
  (await t.db.query('SELECT id::text AS id FROM feed_items WHERE title = $1', [title])).rows[0].id as string;
const served = (path: string) => server.requests.filter((r) => r.path === path).length;

/** Transcripts that are not answered until the test lets them go: more than may be fetched or wait at once. */
const HELD = 4 + 100 + 1;
let letGo: () => void;
const held = new Promise<void>((resolve) => (letGo = resolve));
const heldName = (k: number) => `Held ${String(k).padStart(3, '0')}`;

let refusingPort: number;
/** A loopback port nothing listens on: a connection there is refused. */
async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  t = await testApp(LOOPBACK, appLog.logger);
  refusingPort = await closedPort();
  server = await feedServer({
    '/chapters.json': xml(CHAPTERS, { 'content-type': 'application/json+chapters' }),
    '/t.vtt': xml(VTT, { 'content-type': 'text/vtt' }),
    '/t.srt': xml(SRT, { 'content-type': 'application/x-subrip' }),
    '/t.json': xml(JSON_TRANSCRIPT, { 'content-type': 'application/json' }),
    '/t.html': xml(HTML, { 'content-type': 'text/html' }),
    '/huge.vtt': xml(`WEBVTT\n\n${'00:00:00.000 --> 00:00:01.000\nword\n\n'.repeat(MAX_BYTES.transcript / 20)}`, {
      'content-type': 'text/vtt',
    }),
    '/broken.json': xml('{"chapters": [', { 'content-type': 'application/json' }),
    '/huge.json': xml(
      JSON.stringify({
        version: '1.2.0',
        chapters: Array.from({ length: MAX_BYTES.chapters / 40 }, (_, k) => ({ startTime: k, title: `Chapter ${k}` })),
      }),
      { 'content-type': 'application/json+chapters' },
    ),
    '/none.vtt': xml('WEBVTT\n\nno cues here\n', { 'content-type': 'text/vtt' }),
    // Files of a private network that are no transcript nor chapters, though the feed says they are.
    '/settings.vtt': xml(VTT, { 'content-type': 'text/x-yaml' }),
    '/blob.srt': xml(SRT, { 'content-type': 'application/octet-stream' }),
    '/untyped.srt': (_req, res) => res.end(SRT),
    '/page.json': xml(CHAPTERS, { 'content-type': 'text/html' }),
    '/held/*': (req, res) => void held.then(() => xml(VTT, { 'content-type': 'text/vtt' })(req, res)),
    '/moved.json': (_req, res) => res.writeHead(302, { location: '/chapters.json' }).end(),
  });
  const s = (p: string) => server.url(p);
  const items = [
    item(1, `<podcast:chapters url="${s('/chapters.json')}" type="application/json+chapters"/>`),
    item(
      2,
      `<psc:chapters version="1.2"><psc:chapter start="00:00:00.000" title="Intro"/>
         <psc:chapter start="01:02.5" title="Talk" href="https://example.org/talk"/><psc:chapter start="bad" title="x"/></psc:chapters>`,
    ),
    item(
      3,
      `<podcast:transcript url="${s('/t.html')}" type="text/html"/><podcast:transcript url="${s('/t.vtt')}" type="text/vtt" language="en"/>`,
    ),
    item(4, `<podcast:transcript url="${s('/t.srt')}" type="application/x-subrip"/>`),
    item(5, `<podcast:transcript url="${s('/t.json')}" type="application/json"/>`),
    item(6, `<podcast:transcript url="${s('/t.html')}" type="text/html"/>`),
    item(7, `<podcast:transcript url="${s('/huge.vtt')}" type="text/vtt"/>`),
    item(
      8,
      `<podcast:chapters url="${s('/broken.json')}" type="application/json+chapters"/><psc:chapters><psc:chapter start="5" title="Inline kept"/></psc:chapters>`,
    ),
    item(
      9,
      `<podcast:chapters url="${s('/broken.json')}"/><podcast:transcript url="${s('/none.vtt')}" type="text/vtt"/>`,
    ),
    `<item><guid>huge</guid><title>Huge chapters</title><enclosure url="https://media.example.org/h.mp3" type="audio/mpeg"/>
       <podcast:chapters url="${s('/huge.json')}" type="application/json+chapters"/></item>`,
    titled(
      'Mistyped',
      `<podcast:transcript url="${s('/settings.vtt')}" type="text/vtt"/>
       <podcast:chapters url="${s('/page.json')}" type="application/json+chapters"/>`,
    ),
    titled('Generic', `<podcast:transcript url="${s('/blob.srt')}" type="application/x-subrip"/>`),
    titled('Untyped', `<podcast:transcript url="${s('/untyped.srt')}" type="application/x-subrip"/>`),
    titled(
      'Unreachable',
      `<podcast:transcript url="http://member:doc-pass@127.0.0.1:${refusingPort}/t.vtt?token=doc-token" type="text/vtt"/>
       <podcast:chapters url="http://127.0.0.1:${refusingPort}/c.json" type="application/json+chapters"/>`,
    ),
    ...Array.from({ length: HELD }, (_, k) =>
      titled(heldName(k), `<podcast:transcript url="${s(`/held/${k}.vtt`)}" type="text/vtt"/>`),
    ),
  ].join('');
  // The feed itself is served by a second loopback server, so the documents' request counts are their own.
  showServer = await feedServer({ '/show': xml(feed(items)) });
  u = await t.user('reader');
  expect(
    (await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: showServer.url('/show') }] })).status,
  ).toBe(200);
  await fetchAll();
  web = await signedInAgent(t.app, u.name, u.password);
});
afterAll(async () => {
  letGo?.();
  await server?.close();
  await showServer?.close();
  await t?.close();
});

test('the fetcher keeps what each item declares, and fetches no document itself', async () => {
  const rows = (
    await t.db.query(
      `SELECT title, chapters_url, chapters, transcript_url, transcript_format FROM feed_items ORDER BY title`,
    )
  ).rows;
  expect(rows[0]).toMatchObject({ title: 'Episode 1', chapters_url: server.url('/chapters.json'), chapters: null });
  expect(rows[1].chapters).toEqual([
    { start: 0, title: 'Intro', url: null },
    { start: 62.5, title: 'Talk', url: 'https://example.org/talk' },
  ]);
  // Of two transcripts, the one with times.
  expect(rows[2]).toMatchObject({ transcript_url: server.url('/t.vtt'), transcript_format: 'vtt' });
  expect(rows[3].transcript_format).toBe('srt');
  expect(rows[4].transcript_format).toBe('json');
  expect(rows[5].transcript_format).toBe('html');
  expect(server.requests).toHaveLength(0);
});

test('JSON chapters: fetched once, cleaned, in time order, hidden ones left out; the page offers them', async () => {
  const id = await idOf('Episode 1');
  const page = await web.agent.get(`/web/episodes/${id}`);
  expect(page.text).toContain(`data-src="/web/episodes/${id}/chapters"`);
  expect(page.text).not.toContain('id="transcript"');
  const r = await web.agent.get(`/web/episodes/${id}/chapters`);
  expect(r.status).toBe(200);
  expect(r.headers['content-type']).toMatch(/^application\/json/);
  expect(r.body).toEqual({
    chapters: [
      { start: 0, title: 'Start', url: null },
      { start: 120.5, title: 'The <b>middle</b>', url: 'https://example.org/middle' },
      { start: 300, title: 'End', url: null },
    ],
  });
  await web.agent.get(`/web/episodes/${id}/chapters`).expect(200);
  expect(served('/chapters.json')).toBe(1);
  const kept = await t.db.query('SELECT kind, error FROM item_documents WHERE item_id = $1', [id]);
  expect(kept.rows).toEqual([{ kind: 'chapters', error: null }]);
});

test('Podlove chapters given inline are served without a fetch', async () => {
  const r = await web.agent.get(`/web/episodes/${await idOf('Episode 2')}/chapters`).expect(200);
  expect(r.body.chapters.map((c: { title: string }) => c.title)).toEqual(['Intro', 'Talk']);
});

test.each([
  [
    'Episode 3',
    [
      { start: 0, end: 4, speaker: 'Alice', text: 'Hello and welcome & all.' },
      { start: 4, end: 9.5, speaker: 'Bob', text: 'Thanks, Alice.' },
    ],
  ],
  [
    'Episode 4',
    [
      { start: 1, end: 2.5, speaker: null, text: 'First line' },
      { start: 62, end: 64, speaker: null, text: 'Second line' },
    ],
  ],
  [
    'Episode 5',
    [
      { start: 0.5, end: 1.4, speaker: 'Ann', text: 'Good morning.' },
      { start: 2, end: 3, speaker: 'Ben', text: 'Hi.' },
    ],
  ],
  [
    'Episode 6',
    [
      { start: 0, end: null, speaker: 'Ann', text: 'One bold word.' },
      { start: 65, end: null, speaker: 'Ben', text: 'Two & three.' },
    ],
  ],
])('%s: the transcript as cues of plain text', async (title, cues) => {
  const id = await idOf(title);
  expect((await web.agent.get(`/web/episodes/${id}`)).text).toContain(`data-src="/web/episodes/${id}/transcript"`);
  const r = await web.agent.get(`/web/episodes/${id}/transcript`).expect(200);
  expect(r.body).toEqual({ cues });
});

test('a transcript over the size cap is refused as a feed would be, and the refusal is kept for a while', async () => {
  const id = await idOf('Episode 7');
  const r = await web.agent.get(`/web/episodes/${id}/transcript`).expect(200);
  expect(r.body).toEqual({ cues: [], error: NOT_HAD });
  expect(reasons()).toContainEqual(expect.stringMatching(/over the limit of 2097152/));
  await web.agent.get(`/web/episodes/${id}/transcript`).expect(200);
  expect(served('/huge.vtt')).toBe(1);
});

test('chapters over the size cap are refused as a feed would be, and the refusal is kept for a while', async () => {
  const id = await idOf('Huge chapters');
  const r = await web.agent.get(`/web/episodes/${id}/chapters`).expect(200);
  expect(r.body).toEqual({ chapters: [], error: NOT_HAD });
  expect(reasons()).toContainEqual(expect.stringMatching(/over the limit of 524288/));
  await web.agent.get(`/web/episodes/${id}/chapters`).expect(200);
  expect(served('/huge.json')).toBe(1);
});

test('malformed chapters fall back to the inline ones; without any, the page is told none could be had', async () => {
  expect((await web.agent.get(`/web/episodes/${await idOf('Episode 8')}/chapters`)).body).toEqual({
    chapters: [{ start: 5, title: 'Inline kept', url: null }],
  });
  const nine = await idOf('Episode 9');
  expect((await web.agent.get(`/web/episodes/${nine}/chapters`)).body).toEqual({ chapters: [], error: NOT_HAD });
  expect((await web.agent.get(`/web/episodes/${nine}/transcript`)).body).toEqual({ cues: [], error: NOT_HAD });
  expect(reasons()).toEqual(expect.arrayContaining(['not JSON', 'no cues in this vtt transcript']));
});

test('a document whose address changes is fetched again; an old copy is fetched again', async () => {
  const id = await idOf('Episode 1');
  await t.db.query(`UPDATE feed_items SET chapters_url = $2 WHERE id = $1`, [id, server.url('/moved.json')]);
  const before = served('/chapters.json');
  expect((await web.agent.get(`/web/episodes/${id}/chapters`)).body.chapters).toHaveLength(3);
  expect(served('/moved.json')).toBe(1);
  expect(served('/chapters.json')).toBe(before + 1);
  await t.db.query(`UPDATE item_documents SET fetched_at = now() - interval '8 days' WHERE item_id = $1`, [id]);
  await web.agent.get(`/web/episodes/${id}/chapters`).expect(200);
  expect(served('/moved.json')).toBe(2);
});

test("only a subscriber of the feed reads an episode's chapters and transcript", async () => {
  const other = await t.user('stranger');
  const theirs = await signedInAgent(t.app, other.name, other.password);
  const id = await idOf('Episode 3');
  await theirs.agent.get(`/web/episodes/${id}/transcript`).expect(404);
  await theirs.agent.get(`/web/episodes/${id}/chapters`).expect(404);
  await theirs.agent.get('/web/episodes/99999999/chapters').expect(404);
});

test('the copies go with their item when it leaves the feed', async () => {
  const id = await idOf('Episode 3');
  expect((await t.db.query('SELECT 1 FROM item_documents WHERE item_id = $1', [id])).rowCount).toBe(1);
  await t.db.query('DELETE FROM feed_items WHERE id = $1', [id]);
  expect((await t.db.query('SELECT 1 FROM item_documents WHERE item_id = $1', [id])).rowCount).toBe(0);
});

test('with the default address policy, a document on a private address is refused as a feed is', async () => {
  const strict = await testApp();
  try {
    const v = await strict.user('strict');
    // The feed is fetched with loopback allowed; the app's own policy (the default) is the documents'.
    expect(
      (await as(strict, v).post('/v1/subscriptions', { subscriptions: [{ feed_url: showServer.url('/show') }] }))
        .status,
    ).toBe(200);
    await fetchAll(strict);
    const id = (await strict.db.query(`SELECT id::text AS id FROM feed_items WHERE title = 'Episode 4'`)).rows[0].id;
    const agent = await signedInAgent(strict.app, v.name, v.password);
    const before = served('/t.srt');
    const r = await agent.agent.get(`/web/episodes/${id}/transcript`).expect(200);
    expect(r.body).toEqual({ cues: [], error: NOT_HAD });
    expect(served('/t.srt')).toBe(before);
    // Chapters too.
    const one = (await strict.db.query(`SELECT id::text AS id FROM feed_items WHERE title = 'Episode 1'`)).rows[0].id;
    const fetched = served('/chapters.json');
    const chapters = await agent.agent.get(`/web/episodes/${one}/chapters`).expect(200);
    expect(chapters.body).toEqual({ chapters: [], error: NOT_HAD });
    expect(served('/chapters.json')).toBe(fetched);
  } finally {
    await strict.close();
  }
});

test('a document served as a type that is not its kind is not read, nor a generic one from a private address', async () => {
  const mistyped = await idOf('Mistyped');
  expect((await web.agent.get(`/web/episodes/${mistyped}/transcript`)).body).toEqual({ cues: [], error: NOT_HAD });
  expect((await web.agent.get(`/web/episodes/${mistyped}/chapters`)).body).toEqual({ chapters: [], error: NOT_HAD });
  // Loopback is allowed here only by FEED_FETCH_ALLOW_CIDRS: there a file must say what it is.
  for (const title of ['Generic', 'Untyped']) {
    const r = await web.agent.get(`/web/episodes/${await idOf(title)}/transcript`).expect(200);
    expect(r.body).toEqual({ cues: [], error: NOT_HAD });
  }
  expect(reasons()).toEqual(
    expect.arrayContaining([
      'served as text/x-yaml, not as transcript',
      'served as text/html, not as chapters',
      'served as application/octet-stream from a private address',
      'served as no type from a private address',
    ]),
  );
  const kept = await t.db.query(`SELECT count(*)::int AS n FROM item_documents WHERE content IS NOT NULL
     AND item_id IN (SELECT id FROM feed_items WHERE title IN ('Mistyped', 'Generic', 'Untyped'))`);
  expect(kept.rows[0].n).toBe(0);
});

test('the person is told the document could not be had, never what the network answered; the log says', async () => {
  const id = await idOf('Unreachable');
  for (const kind of ['transcript', 'chapters']) {
    const r = await web.agent.get(`/web/episodes/${id}/${kind}`).expect(200);
    expect(r.body.error).toBe(NOT_HAD);
    expect(r.text).not.toMatch(/ECONNREFUSED|127\.0\.0\.1/);
  }
  // The copy kept of the failure is served the same way.
  expect((await web.agent.get(`/web/episodes/${id}/transcript`)).body).toEqual({ cues: [], error: NOT_HAD });
  expect(reasons().filter((r) => r.startsWith('ECONNREFUSED'))).toHaveLength(2);
  // A private feed's document address carries its password or token: the log has neither.
  expect(appLog.lines.map((l) => l.url)).toContain(`http://[redacted]@127.0.0.1:${refusingPort}/t.vtt?[redacted]`);
  expect(appLog.raw.join('\n')).not.toMatch(/doc-pass|doc-token|member/);
});

test('a kept copy is not served by a process whose policy refuses the address it came from', async () => {
  const id = await idOf('Episode 4');
  expect((await web.agent.get(`/web/episodes/${id}/transcript`)).body.cues).toHaveLength(2);
  const fetched = served('/t.srt');
  // Another process over the same database, with the default policy (loopback refused).
  const config = loadConfig({ DATABASE_URL: t.url }, { dotenvFile: false });
  const strict = createApp({ db: t.db, config, logger: pino({ level: 'silent' }) });
  const there = await signedInAgent(strict, u.name, u.password);
  expect((await there.agent.get(`/web/episodes/${id}/transcript`)).body).toEqual({ cues: [], error: NOT_HAD });
  expect(served('/t.srt')).toBe(fetched);
  // The copy stays for the process whose policy allows the address.
  expect((await web.agent.get(`/web/episodes/${id}/transcript`)).body.cues).toHaveLength(2);
  expect(served('/t.srt')).toBe(fetched);
});

test('when too many fetches wait, the person is told to try again, and nothing is kept', async () => {
  const ids = await Promise.all(Array.from({ length: HELD }, (_, k) => idOf(heldName(k))));
  const answers = ids.map((id) => web.agent.get(`/web/episodes/${id}/transcript`).then((r) => r.body));
  // 4 fetch and 100 wait, held by the server: one is turned away at once.
  const busy = await Promise.race(answers);
  expect(busy).toEqual({ cues: [], error: BUSY });
  letGo();
  const all = await Promise.all(answers);
  expect(all.filter((b) => b.error === BUSY)).toHaveLength(1);
  expect(all.filter((b) => b.cues.length === 2)).toHaveLength(HELD - 1);
  const turnedAway = ids[all.findIndex((b) => b.error === BUSY)];
  expect((await t.db.query('SELECT 1 FROM item_documents WHERE item_id = $1', [turnedAway])).rowCount).toBe(0);
  expect((await web.agent.get(`/web/episodes/${turnedAway}/transcript`)).body.cues).toHaveLength(2);
});
