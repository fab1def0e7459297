import request from 'supertest';
import Ajv2020 from 'ajv/dist/2020';
import * as stats from '../../src/stats/service';
import * as subscriptions from '../../src/subscriptions/service';
import { spoken } from '../../src/web/stats';
import { as, expectError, testApp, type TestApp, type TestUser } from '../helpers/app';
import { csrfOf, signedInAgent } from '../helpers/web';

// Listening statistics from hand-built histories of plays, compared with figures worked out here another
// way: second by second, each second of an episode credited to the local day it was first heard on.

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

type Action = {
  podcast: string;
  episode: string;
  action: 'play' | 'download';
  timestamp: string;
  device?: string;
  started?: number;
  position?: number;
  total?: number;
};

const P1 = 'https://stats.example/one.xml';
const P2 = 'https://stats.example/two.xml';
const play = (podcast: string, episode: string, at: string, started: number, position: number, more = {}) =>
  ({ podcast, episode, action: 'play', timestamp: at, started, position, ...more }) as Action;

async function upload(u: TestUser, actions: Action[]) {
  for (let i = 0; i < actions.length; i += 500) {
    const r = await as(t, u).post(`/api/2/episodes/${u.name}.json`, actions.slice(i, i + 500));
    expect(r.status).toBe(200);
  }
}

const statsOf = (u: TestUser, query = '') => as(t, u).get(`/v1/stats${query}`);

/** The history of the cases: overlaps, a repeat, a seek back past the end, two devices, midnight. */
const HISTORY: Action[] = [
  // 22:30 on Feb 28 in New York.
  play(P1, 'https://stats.example/1.mp3', '2026-03-01T03:30:00', 0, 600, { total: 3600, device: 'phone' }),
  // Overlaps the first 300 s of the next span.
  play(P1, 'https://stats.example/1.mp3', '2026-03-01T12:00:00', 300, 900, { total: 3600, device: 'laptop' }),
  // Heard again: nothing new.
  play(P1, 'https://stats.example/1.mp3', '2026-03-02T12:00:00', 0, 900, { total: 3600, device: 'phone' }),
  // Sought back to 100 s and played past the end the app reported: clipped at 3600, and finished.
  play(P1, 'https://stats.example/1.mp3', '2026-03-02T13:00:00', 100, 3700, { total: 3600, device: 'phone' }),
  // 23:59 on Mar 1 in New York; no length known.
  play(P2, 'https://stats.example/2.mp3', '2026-03-02T04:59:00', 0, 120, { device: 'laptop' }),
  // Not plays, or nothing to count.
  { podcast: P2, episode: 'https://stats.example/2.mp3', action: 'download', timestamp: '2026-03-02T05:00:00' },
  play(P2, 'https://stats.example/3.mp3', '2026-03-02T06:00:00', 500, 400, { device: 'laptop' }),
];

test("a podcast is one, whatever URL its plays named: a feed that moved adds up under the record's URL now", async () => {
  const u = await t.user('moved');
  const added = await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: P1 }] });
  const guid = added.body.success[0].guid as string;
  await upload(u, [play(P1, 'https://stats.example/m1.mp3', '2026-03-01T12:00:00', 0, 600, { total: 3600 })]);
  const moved = 'https://stats.example/moved.xml';
  expect((await as(t, u).patch(`/v1/subscriptions/${guid}`, { new_feed_url: moved })).status).toBe(200);
  await upload(u, [
    play(moved, 'https://stats.example/m2.mp3', '2026-03-02T12:00:00', 0, 300, { total: 3600 }),
    play(P2, 'https://stats.example/m3.mp3', '2026-03-02T13:00:00', 0, 60, { total: 3600 }),
  ]);
  expect((await statsOf(u)).body.by_podcast).toEqual([
    { podcast_url: moved, podcast_guid: guid, listened_seconds: 900 },
    { podcast_url: P2, podcast_guid: expect.any(String), listened_seconds: 60 },
  ]);
  // Records merged (the duplicates page): P2's plays, made before it had a record, count under the kept one.
  const second = await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: P2 }] });
  await subscriptions.mergeRecords(t.db, u.id, guid, [second.body.success[0].guid as string]);
  expect((await statsOf(u)).body.by_podcast).toEqual([
    { podcast_url: moved, podcast_guid: guid, listened_seconds: 960 },
  ]);
});

describe('the figures of a hand-built history', () => {
  test('in New York: the spans counted once, clipped, on local days', async () => {
    const u = await t.user('ny');
    await stats.setTimeZone(t.db, u.id, 'America/New_York');
    await upload(u, HISTORY);
    const r = await statsOf(u);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      listened_seconds: 600 + 300 + 2700 + 120,
      episodes_finished: 1,
      by_podcast: [
        { podcast_url: P1, podcast_guid: expect.any(String), listened_seconds: 3600 },
        { podcast_url: P2, podcast_guid: expect.any(String), listened_seconds: 120 },
      ],
      by_device: [
        { device: 'phone', listened_seconds: 3300 },
        { device: 'laptop', listened_seconds: 420 },
      ],
      by_day: [
        { date: '2026-02-28', listened_seconds: 600 },
        { date: '2026-03-01', listened_seconds: 420 },
        { date: '2026-03-02', listened_seconds: 2700 },
      ],
    });
    // A range: what was heard before it is not heard anew in it.
    const day = await statsOf(u, '?from=2026-03-01&to=2026-03-01');
    expect(day.body.listened_seconds).toBe(420);
    expect(day.body.episodes_finished).toBe(0);
    expect(day.body.by_day).toEqual([{ date: '2026-03-01', listened_seconds: 420 }]);
    const later = await statsOf(u, '?from=2026-03-02');
    expect(later.body).toMatchObject({ listened_seconds: 2700, episodes_finished: 1 });
  });

  test('the same history in UTC falls on other days', async () => {
    const u = await t.user('utc');
    await upload(u, HISTORY);
    expect((await statsOf(u)).body.by_day).toEqual([
      { date: '2026-03-01', listened_seconds: 900 },
      { date: '2026-03-02', listened_seconds: 2820 },
    ]);
  });

  test('random histories of several devices equal a second-by-second count, in three time zones', async () => {
    const zones = ['UTC', 'Asia/Kolkata', 'Pacific/Honolulu'];
    for (let seed = 1; seed <= 3; seed++) {
      const actions = randomHistory(seed);
      for (const zone of zones) {
        const u = await t.user('random');
        if (zone !== 'UTC') await stats.setTimeZone(t.db, u.id, zone);
        await upload(u, actions);
        const expected = secondBySecond(actions, zone);
        const got = (await statsOf(u)).body;
        expect(got.listened_seconds).toBe(expected.total);
        expect(got.episodes_finished).toBe(expected.finished);
        expect(
          Object.fromEntries(
            got.by_day.map((d: { date: string; listened_seconds: number }) => [d.date, d.listened_seconds]),
          ),
        ).toEqual(expected.days);
        expect(
          Object.fromEntries(
            got.by_device.map((d: { device: string; listened_seconds: number }) => [d.device, d.listened_seconds]),
          ),
        ).toEqual(expected.devices);
      }
    }
  });
});

/** A small deterministic generator (mulberry32). */
function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** 150 plays of 6 episodes on 3 devices over 10 days, at any hour: overlaps, repeats and seeks back. */
function randomHistory(seed: number): Action[] {
  const r = random(seed);
  const pick = (n: number) => Math.floor(r() * n);
  const totals = [600, 1200, 300, 1800, 900, 2400];
  return Array.from({ length: 150 }, (_, i) => {
    const ep = pick(6);
    const started = pick(totals[ep]! + 100);
    const at = new Date(Date.UTC(2026, 4, 1) + pick(10 * 86_400) * 1000 + i).toISOString().slice(0, 19);
    return play(
      `https://random.example/${ep % 2}.xml`,
      `https://random.example/${ep}.mp3`,
      at,
      started,
      started + pick(700),
      {
        total: totals[ep],
        device: `device-${pick(3)}`,
      },
    );
  });
}

/** The figures counted one second at a time, with the local day from the platform's own calendar. */
function secondBySecond(actions: Action[], zone: string) {
  const dayOf = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' });
  const heard = new Map<string, Set<number>>();
  const finished = new Set<string>();
  const days: Record<string, number> = {};
  const devices: Record<string, number> = {};
  let total = 0;
  const inOrder = [...actions].sort((a, b) => (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : 0));
  for (const a of inOrder) {
    const day = dayOf.format(new Date(`${a.timestamp}Z`));
    const seconds = heard.get(a.episode) ?? new Set<number>();
    heard.set(a.episode, seconds);
    for (let s = a.started!; s < Math.min(a.position!, a.total!); s++) {
      if (seconds.has(s)) continue;
      seconds.add(s);
      total++;
      days[day] = (days[day] ?? 0) + 1;
      devices[a.device!] = (devices[a.device!] ?? 0) + 1;
    }
    if (a.position! >= a.total! - 30) finished.add(a.episode);
  }
  return { total, days, devices, finished: finished.size };
}

describe('nothing leaks', () => {
  test("another user's plays are not in anyone's statistics", async () => {
    const [a, b] = [await t.user('own'), await t.user('other')];
    await upload(b, [
      play('https://secret.example/feed.xml', 'https://secret.example/1.mp3', '2026-01-05T10:00:00', 0, 999),
    ]);
    await upload(a, [play(P1, 'https://stats.example/9.mp3', '2026-01-05T10:00:00', 0, 60)]);
    const mine = (await statsOf(a)).body;
    expect(mine.listened_seconds).toBe(60);
    expect(JSON.stringify(mine)).not.toContain('secret.example');
    const web = await signedInAgent(t.app, a.name, a.password);
    const page = await web.agent.get('/web/stats');
    expect(page.text).not.toContain('secret.example');
    expect(page.text).toContain('stats.example');
    expect((await web.agent.get('/web/stats/2026')).text).not.toContain('secret.example');
  });
});

describe('the endpoint', () => {
  test('bad dates are 400s that name the parameter; no credentials, 401', async () => {
    const u = await t.user();
    expectError(await statsOf(u, '?from=2026-02-30'), 400, /^Invalid from/);
    expectError(await statsOf(u, '?to=yesterday'), 400, /^Invalid to/);
    expectError(await statsOf(u, '?from=2026-03-02&to=2026-03-01'), 400, /^Invalid from/);
    expectError(await statsOf(u, '?from=2026-01-01&from=2026-01-02'), 400, /^Invalid from/);
    expect((await request(t.app).get('/v1/stats')).status).toBe(401);
  });

  test('the year 0000, which the calendar has not, is a bad date: a 400, and no year in review', async () => {
    const u = await t.user();
    await upload(u, HISTORY);
    expectError(await statsOf(u, '?to=0000-12-31'), 400, /^Invalid to/);
    expectError(await statsOf(u, '?from=0000-01-01'), 400, /^Invalid from/);
    expect((await statsOf(u, '?from=0001-01-01&to=9999-12-31')).body.listened_seconds).toBe(3720);
    const web = await signedInAgent(t.app, u.name, u.password);
    expect((await web.agent.get('/web/stats/0000')).status).toBe(404);
    expect((await web.agent.get('/web/stats/0001')).status).toBe(404);
  });

  test('an empty history; the response matches the documented schema; advertised as unstable', async () => {
    const u = await t.user();
    const empty = (await statsOf(u)).body;
    expect(empty).toEqual({ listened_seconds: 0, episodes_finished: 0, by_podcast: [], by_device: [], by_day: [] });
    await upload(u, HISTORY);
    const doc = (await request(t.app).get('/openapi.json')).body;
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    ajv.addSchema({ $id: 'castsync', components: doc.components });
    const validate = ajv.getSchema('castsync#/components/schemas/Stats')!;
    expect(validate((await statsOf(u)).body)).toBe(true);
    expect(validate({ ...empty, by_day: [{ date: '2026-01-01' }] })).toBe(false);
    expect(doc.paths['/v1/stats'].get.description).toMatch(/Experimental/);
    const caps = (await request(t.app).get('/v1/capabilities')).body.capabilities;
    expect(caps['urn:castsync:stats']).toEqual({ '0.0.0-draft': { status: 'UNSTABLE', root: '/v1' } });
  });
});

describe('the web pages', () => {
  test('the statistics page draws its charts with tables, and links each year in review', async () => {
    const u = await t.user('web');
    await upload(u, HISTORY);
    const web = await signedInAgent(t.app, u.name, u.password);
    const page = await web.agent.get('/web/stats');
    expect(page.status).toBe(200);
    expect(page.text.match(/<svg class="chart"[^>]*role="img"/g)).toHaveLength(3);
    expect(page.text).toContain('<caption>The last 30 days</caption>');
    expect(page.text).toContain('href="/web/stats/2026"');
    expect(page.text).toContain('1 h 02 min');
    const year = await web.agent.get('/web/stats/2026');
    expect(year.status).toBe(200);
    expect(year.text).toContain('2026 in review');
    expect(year.text).toContain('<th scope="row">Mar 2026</th><td>1 h 02 min</td>');
    expect(year.text).toContain('Busiest day</dt><dd>2026-03-02: 47 min');
    expect((await web.agent.get('/web/stats/2019')).status).toBe(404);
    expect((await web.agent.get('/web/stats/nope')).status).toBe(404);
  });

  test("the page's today, week, month and year are those of /v1/stats up to today: a play dated later is in none", async () => {
    const u = await t.user('ahead');
    const now = Date.now();
    const stamp = (ms: number) => new Date(ms).toISOString().slice(0, 19);
    // An app whose clock runs two days fast dates its play after today; the gpodder contract keeps its time.
    await upload(u, [
      play(P1, 'https://stats.example/now.mp3', stamp(now), 0, 600, { total: 3600 }),
      play(P1, 'https://stats.example/ahead.mp3', stamp(now + 2 * 86_400_000), 0, 1200, { total: 3600 }),
    ]);
    const today = new Date(now).toISOString().slice(0, 10);
    const web = await signedInAgent(t.app, u.name, u.password);
    const page = (await web.agent.get('/web/stats')).text;
    const starts = [
      ['Today', today],
      ['This week', stats.weekOf(today)],
      ['This month', `${today.slice(0, 7)}-01`],
      ['This year', `${today.slice(0, 4)}-01-01`],
    ];
    for (const [name, from] of starts) {
      const api = (await statsOf(u, `?from=${from}&to=${today}`)).body.listened_seconds;
      expect(api).toBe(600);
      expect(page).toContain(`<dt>${name}</dt><dd>${spoken(api)}</dd>`);
    }
  });

  test('the account page sets the time zone the statistics count in', async () => {
    const u = await t.user('zone');
    await upload(u, HISTORY);
    const web = await signedInAgent(t.app, u.name, u.password);
    const account = await web.agent.get('/web/account');
    expect(account.text).toContain('<option selected>UTC</option>');
    const saved = await web.agent
      .post('/web/account/time-zone')
      .type('form')
      .send({ _csrf: csrfOf(account.text), time_zone: 'America/New_York' });
    expect(saved.text).toContain('Your time zone was saved.');
    expect(saved.text).toContain('<option selected>America/New_York</option>');
    expect((await statsOf(u)).body.by_day[0]).toEqual({ date: '2026-02-28', listened_seconds: 600 });
    const refused = await web.agent
      .post('/web/account/time-zone')
      .type('form')
      .send({ _csrf: csrfOf(account.text), time_zone: 'Mars/Olympus' });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('Unknown time zone: Mars/Olympus');
    expect(await stats.timeZone(t.db, u.id)).toBe('America/New_York');
  });
});
