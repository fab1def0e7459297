import { randomUUID } from 'node:crypto';
import pino from 'pino';
import request from 'supertest';
import { performDeletion } from '../../src/deletions/service';
import * as transfer from '../../src/transfer/service';
import { as, testApp, type TestApp, type TestUser } from '../helpers/app';
import { csrfOf, signedInAgent } from '../helpers/web';
import { feedLearnt } from '../helpers/feeds';

// A way out of a mess: merging records that are the same feed, and starting over without sending removals.

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

const gpodderPull = (u: TestUser, since: number) =>
  request(t.app).get(`/api/2/subscriptions/${u.name}/phone.json?since=${since}`).set('Authorization', u.basic);

/** The guid of the user's record with this feed URL. */
const guidOf = async (u: TestUser, url: string) =>
  ((await as(t, u).get('/v1/subscriptions')).body.subscriptions as { feed_url: string; guid: string }[]).find(
    (s) => s.feed_url === url,
  )!.guid;

/** "Keep this one" on the duplicates page. */
const keepThisOne = (web: Awaited<ReturnType<typeof signedInAgent>>, keep: string, merge: string) =>
  web.agent.post('/web/duplicates/merge').type('form').send({ _csrf: web.csrf, keep, merge });

describe('duplicates', () => {
  test('found by podcast guid, by a move and by title on one host; merged into the kept record', async () => {
    const u = await t.user();
    const urls = {
      a: 'https://dup.example/a.xml',
      b: 'https://cdn.dup.example/a.xml',
      c: 'https://dup.example/c.xml',
      d: 'https://dup.example/d.xml',
      f: 'https://same.example/f.xml',
      g: 'https://same.example/g.xml',
      e: 'https://alone.example/e.xml',
    };
    await as(t, u).post('/v1/subscriptions', { subscriptions: Object.values(urls).map((feed_url) => ({ feed_url })) });
    await feedLearnt(t.db, urls.a, { title: 'Show A', podcastGuid: '917393e3-1b1e-5cef-ace4-edaa54e1f810' });
    await feedLearnt(t.db, urls.b, { title: 'Show A (CDN)', podcastGuid: '917393e3-1b1e-5cef-ace4-edaa54e1f810' });
    await feedLearnt(t.db, urls.c, { title: 'Old C', movedTo: urls.d });
    await feedLearnt(t.db, urls.f, { title: 'The  Same Show' });
    await feedLearnt(t.db, urls.g, { title: 'the same show' });
    await feedLearnt(t.db, urls.e, { title: 'Alone' });
    await as(t, u).post(`/api/2/episodes/${u.name}.json`, [
      {
        podcast: urls.b,
        episode: 'https://cdn.dup.example/1.mp3',
        action: 'play',
        position: 42,
        timestamp: '2026-11-22T10:00:00',
      },
    ]);
    const [guidA, guidB] = [await guidOf(u, urls.a), await guidOf(u, urls.b)];

    const web = await signedInAgent(t.app, u.name, u.password);
    const page = await web.agent.get('/web/duplicates');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Why: both feeds declare podcast guid 917393e3-1b1e-5cef-ace4-edaa54e1f810.');
    expect(page.text).toContain(`Why: the feed at ${urls.c} says it moved to ${urls.d}.`);
    expect(page.text).toContain('Why: the same title on the same host.');
    expect(page.text).not.toContain(urls.e);

    const mark = (await gpodderPull(u, 0)).body.timestamp as number;
    await new Promise((r) => setTimeout(r, 1100));
    const merged = await keepThisOne(web, guidA, guidB);
    expect(merged.status).toBe(200);
    expect(merged.text).toContain('Merged 1 into one record.');
    expect(merged.text).not.toContain('Why: both feeds declare podcast guid');

    // The OPA view: one record, reached by either guid; the plays follow it.
    const list = (await as(t, u).get('/v1/subscriptions')).body.subscriptions as { feed_url: string }[];
    expect(list.map((s) => s.feed_url)).not.toContain(urls.b);
    expect((await as(t, u).get(`/v1/subscriptions/${guidB}`)).body.feed_url).toBe(urls.a);
    const plays = await as(t, u).get(`/api/2/episodes/${u.name}.json?podcast=${encodeURIComponent(urls.a)}`);
    expect(plays.body.actions.map((a: { position: number }) => a.position)).toEqual([42]);
    // Apps syncing by URL are told once to remove the merged-away URL.
    const pull = await gpodderPull(u, mark);
    expect(pull.body.remove).toEqual([urls.b]);
    expect(pull.body.add).toContain(urls.a);
    // Once: a change a few seconds later moves T past the merge (T may repeat the last second or two).
    await new Promise((r) => setTimeout(r, 2100));
    await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: 'https://later.example/x.xml' }] });
    const later = await gpodderPull(u, pull.body.timestamp + 1);
    expect(later.body.remove).toEqual([urls.b]);
    expect((await gpodderPull(u, later.body.timestamp + 1)).body.remove).toEqual([]);
    // An app that still sends the old URL reaches the kept record: no duplicate comes back.
    const again = await as(t, u).post(`/api/2/subscriptions/${u.name}/phone.json`, { add: [urls.b], remove: [] });
    expect(again.body.update_urls).toEqual([[urls.b, urls.a]]);
    expect((await as(t, u).get('/v1/subscriptions')).body.total).toBe(7);
  });

  test("another user's record cannot be merged, nor a record with itself", async () => {
    const u = await t.user();
    const v = await t.user();
    await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: 'https://mine.example/1.xml' }] });
    await as(t, v).post('/v1/subscriptions', { subscriptions: [{ feed_url: 'https://theirs.example/1.xml' }] });
    const mine = (await as(t, u).get('/v1/subscriptions')).body.subscriptions[0].guid as string;
    const theirs = (await as(t, v).get('/v1/subscriptions')).body.subscriptions[0].guid as string;
    const web = await signedInAgent(t.app, u.name, u.password);
    expect((await keepThisOne(web, mine, theirs)).status).toBe(404);
    const self = await keepThisOne(web, mine, mine);
    expect(self.status).toBe(400);
    expect(self.text).toContain('Choose at least one other record');
    expect((await as(t, v).get('/v1/subscriptions')).body.total).toBe(1);
  });

  test('a record an app asked to delete is not merged: the deletion would take the kept record with it', async () => {
    const u = await t.user();
    const urls = { a: 'https://pending.example/a.xml', b: 'https://cdn.pending.example/a.xml' };
    await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: urls.a }, { feed_url: urls.b }] });
    await as(t, u).post(`/api/2/episodes/${u.name}.json`, [
      { podcast: urls.a, episode: 'https://pending.example/1.mp3', action: 'play', position: 42 },
    ]);
    const [guidA, guidB] = [await guidOf(u, urls.a), await guidOf(u, urls.b)];
    const deletion = await as(t, u).del(`/v1/subscriptions/${guidB}`);
    expect(deletion.status).toBe(202);

    const merged = await keepThisOne(await signedInAgent(t.app, u.name, u.password), guidA, guidB);
    expect(merged.status).toBe(400);
    expect(merged.text).toContain('is being deleted');
    await performDeletion(t.db, pino({ level: 'silent' }), deletion.body.deletion_id);

    // The deletion took the record it was asked for; the one to keep stays, with its plays.
    expect((await as(t, u).get(`/v1/subscriptions/${guidB}`)).status).toBe(410);
    expect((await as(t, u).get(`/v1/subscriptions/${guidA}`)).body).toMatchObject({ feed_url: urls.a });
    const plays = await as(t, u).get(`/api/2/episodes/${u.name}.json?podcast=${encodeURIComponent(urls.a)}`);
    expect(plays.body.actions.map((a: { position: number }) => a.position)).toEqual([42]);
  });

  test("a favourite and an Up next entry of a merged-away feed name the kept record's guid", async () => {
    const u = await t.user();
    const urls = { a: 'https://fav.example/a.xml', b: 'https://cdn.fav.example/a.xml' };
    // The app chose the merged-away record's guid: the one computed from its URL names no record.
    const chosen = randomUUID();
    await as(t, u).post('/v1/subscriptions', {
      subscriptions: [{ feed_url: urls.a }, { feed_url: urls.b, guid: chosen }],
    });
    const episode = { podcast_url: urls.b, enclosure_url: 'https://cdn.fav.example/1.mp3' };
    const starred = await as(t, u).post('/v1/episodes', [
      { ...episode, favorite_status: { value: true, timestamp: '2026-11-22T10:00:00Z' } },
    ]);
    expect(starred.body.failure).toEqual([]);
    expect((await as(t, u).post('/v1/queue/items', episode)).status).toBe(201);

    const guidA = await guidOf(u, urls.a);
    const merged = await keepThisOne(await signedInAgent(t.app, u.name, u.password), guidA, chosen);
    expect(merged.status).toBe(200);

    const episodes = (await as(t, u).get('/v1/episodes')).body.episodes as { podcast_guid: string }[];
    expect(episodes.map((e) => e.podcast_guid)).toEqual([guidA]);
    const queue = (await as(t, u).get('/v1/queue')).body.items as { podcast_guid: string }[];
    expect(queue.map((q) => q.podcast_guid)).toEqual([guidA]);
  });
});

describe('start over', () => {
  test('forgets the list and the plays without sending removals; the apps upload theirs again', async () => {
    const u = await t.user();
    await as(t, u).post(`/api/2/subscriptions/${u.name}/phone.json`, {
      add: ['https://reset.example/1.xml', 'https://reset.example/2.xml'],
      remove: [],
    });
    await as(t, u).post(`/api/2/episodes/${u.name}.json`, [
      { podcast: 'https://reset.example/1.xml', episode: 'https://reset.example/1.mp3', action: 'download' },
    ]);
    const mark = (await gpodderPull(u, 0)).body.timestamp as number;
    const { agent, csrf } = await signedInAgent(t.app, u.name, u.password);
    const page = await agent.get('/web/start-over');
    expect(page.text).toContain('href="/web/opml"');
    const wrong = await agent.post('/web/start-over').type('form').send({ _csrf: csrf, confirm: 'someone-else' });
    expect(wrong.status).toBe(400);
    expect(wrong.text).toContain('Type your username exactly to confirm: nothing was changed.');
    expect((await as(t, u).get('/v1/subscriptions')).body.total).toBe(2);

    const done = await agent
      .post('/web/start-over')
      .type('form')
      .send({ _csrf: csrfOf(page.text), confirm: u.name });
    expect(done.status).toBe(200);
    expect(done.text).toContain('2 subscription records and 1 episode action forgotten');
    expect((await as(t, u).get('/v1/subscriptions')).body.total).toBe(0);
    // No removal reaches the apps, whatever since they sync from.
    for (const since of [0, mark]) {
      const pull = await gpodderPull(u, since);
      expect({ add: pull.body.add, remove: pull.body.remove }).toEqual({ add: [], remove: [] });
    }
    expect((await as(t, u).get(`/api/2/episodes/${u.name}.json?since=0`)).body.actions).toEqual([]);
    // A full sync of the app puts its list back.
    await as(t, u).post(`/api/2/subscriptions/${u.name}/phone.json`, {
      add: ['https://reset.example/2.xml'],
      remove: [],
    });
    expect(
      (await as(t, u).get('/v1/subscriptions')).body.subscriptions.map((s: { feed_url: string }) => s.feed_url),
    ).toEqual(['https://reset.example/2.xml']);
    // The account stays: devices too.
    expect((await as(t, u).get(`/api/2/devices/${u.name}.json`)).body.map((d: { id: string }) => d.id)).toEqual([
      'phone',
    ]);
  });
});

describe('start over and the sync draft', () => {
  test('a subscribe the sync draft had applied, sent again after a start over, puts the feed back', async () => {
    const u = await t.user();
    const subscribe = {
      requests: [
        {
          type: 'subscription',
          action: 'subscribe',
          action_id: randomUUID(),
          occurred_at: '2026-11-20T10:00:00Z',
          data: { feed_url: 'https://reset.example/sync.xml' },
        },
      ],
    };
    const first = await as(t, u).post('/api/v1/sync', subscribe);
    expect(first.body.results[0].status).toBe('applied');
    await transfer.startOver(t.db, u.id);
    // An app that sends its history again after the server forgot the list: what it names is not there.
    const again = await as(t, u).post('/api/v1/sync', subscribe);
    expect(again.status).toBe(200);
    expect(again.body.results[0]).toMatchObject({
      status: 'applied',
      data: { feed_url: 'https://reset.example/sync.xml' },
    });
    const list = (await as(t, u).get('/v1/subscriptions')).body.subscriptions as { feed_url: string }[];
    expect(list.map((x) => x.feed_url)).toEqual(['https://reset.example/sync.xml']);
  });
});
