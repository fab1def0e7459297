import { recordInterchange } from '../../src/episodes/interchange';
import { testApp, type TestApp } from '../helpers/app';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

const action = (episode: string, extra: object = {}) => ({
  podcast: 'https://intake.example/feed.xml',
  episode: `https://intake.example/${episode}.mp3`,
  action: 'download',
  timestamp: '2026-11-20T10:00:00',
  ...extra,
});

test('one intake: unreadable and refused actions are named by their index in what was sent, the rest stored', async () => {
  const u = await t.user();
  const done = await recordInterchange(
    t.db,
    u.id,
    [
      action('e0', { podcast: 'ftp://intake.example/feed.xml' }),
      action('e1'),
      'not an action',
      action('e3', { action: 'play' }),
      action('e4', { device: 'no spaces allowed' }),
      action('e5'),
    ],
    new Date('2026-11-21T00:00:00Z'),
  );
  expect(done.stored).toBe(2);
  expect(done.actions.map((a) => a.episodeUrl)).toEqual([
    'https://intake.example/e0.mp3',
    'https://intake.example/e1.mp3',
    'https://intake.example/e4.mp3',
    'https://intake.example/e5.mp3',
  ]);
  expect(done.skipped.map((s) => s.index)).toEqual([0, 2, 3, 4]);
  expect(done.skipped[1]!.reason).toBe('not an object');
  expect(done.skipped[2]!.reason).toMatch(/^position: /);
  expect(done.skipped[3]!.reason).toMatch(/^device: /);
});

test('an action without a time is taken at the time received', async () => {
  const u = await t.user();
  const received = new Date('2026-11-21T08:30:00Z');
  const done = await recordInterchange(t.db, u.id, [action('e1', { timestamp: '' })], received);
  expect(done.skipped).toEqual([]);
  expect(done.actions[0]!.at).toEqual(received);
});
