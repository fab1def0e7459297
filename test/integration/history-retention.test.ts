import pino from 'pino';
import { pruneHistory, retentionTasks } from '../../src/episodes/retention';
import { idleTasks } from '../../src/transfer/idle';
import { as, testApp, type TestApp, type TestUser } from '../helpers/app';

// The history retention (EPISODE_HISTORY_RETENTION_DAYS, docs/idle-accounts.md): old actions that a later
// one of the same episode and type supersedes go; every episode's state, and every `since` within the
// retained days, read the same as before.

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

const feed = 'https://keep.example/feed';
const ep = (n: number) => `https://keep.example/${n}.mp3`;
const DAY = 24 * 3600_000;

/** Moves the stamps of the user's actions of these episodes (and of their latest) `days` back. */
async function age(userId: number, episodes: string[], days: number): Promise<void> {
  await t.db.query(
    `UPDATE episode_actions SET changed = changed - make_interval(days => $3) WHERE user_id = $1 AND episode_url = ANY ($2)`,
    [userId, episodes, days],
  );
  await t.db.query(
    `UPDATE episode_latest l SET changed = a.changed FROM episode_actions a
      WHERE a.user_id = l.user_id AND a.id = l.action_id AND l.user_id = $1`,
    [userId],
  );
}

const upload = async (u: TestUser, actions: object[]) =>
  expect((await as(t, u).post(`/api/2/episodes/${u.name}.json`, actions)).status).toBe(200);
const play = (n: number, day: string, position: number) => ({
  podcast: feed,
  episode: ep(n),
  action: 'play',
  timestamp: `2022-01-${day}T10:00:00`,
  position,
});

const stored = async (userId: number) =>
  (
    await t.db.query<{ episode_url: string; action: string; position: number | null }>(
      'SELECT episode_url, action, position FROM episode_actions WHERE user_id = $1 ORDER BY episode_url, at',
      [userId],
    )
  ).rows.map((r) => `${r.episode_url.slice(-5)} ${r.action}${r.position === null ? '' : ` ${r.position}`}`);

/** What the apps read: the aggregated download, each episode's record, and a download since `since` (seconds). */
async function reads(u: TestUser, since: number) {
  const api = as(t, u);
  const aggregated = await api.get(`/api/2/episodes/${u.name}.json?aggregated=true`);
  const recent = await api.get(`/api/2/episodes/${u.name}.json?since=${since}`);
  const records = await api.get('/v1/episodes');
  return { aggregated: aggregated.body.actions, recent: recent.body.actions, records: records.body.episodes };
}

test('only superseded actions stored before the retained days go; every state and every recent since read the same', async () => {
  const u = await t.user('kept');
  const other = await t.user('other');
  await upload(u, [
    { podcast: feed, episode: ep(1), action: 'download', timestamp: '2022-01-01T10:00:00' },
    play(1, '02', 10),
    play(1, '03', 20),
    play(2, '04', 5),
  ]);
  await upload(other, [play(1, '05', 30), play(1, '06', 40)]);
  await age(u.id, [ep(1), ep(2)], 100);
  const since = Math.floor(Date.now() / 1000) - 60;
  // Stored now: a later play of episode 2, and two plays of episode 3 (one superseded, but recent).
  await upload(u, [play(2, '07', 50), play(3, '08', 1), play(3, '09', 2)]);
  expect(await stored(u.id)).toEqual([
    '1.mp3 download',
    '1.mp3 play 10',
    '1.mp3 play 20',
    '2.mp3 play 5',
    '2.mp3 play 50',
    '3.mp3 play 1',
    '3.mp3 play 2',
  ]);
  const before = await reads(u, since);
  const stamp = async () => (await t.db.query('SELECT last_change FROM users WHERE id = $1', [u.id])).rows[0];
  const stampBefore = await stamp();

  expect(await pruneHistory(t.db, new Date(Date.now() - 30 * DAY))).toBe(2);
  expect(await stored(u.id)).toEqual([
    '1.mp3 download',
    '1.mp3 play 20',
    '2.mp3 play 50',
    '3.mp3 play 1',
    '3.mp3 play 2',
  ]);
  expect(await reads(u, since)).toEqual(before);
  // Nothing new for the apps: no change stamp was taken.
  expect(await stamp()).toEqual(stampBefore);
  // Another user's history within the retained days is untouched; a second run finds nothing.
  expect(await stored(other.id)).toEqual(['1.mp3 play 30', '1.mp3 play 40']);
  expect(await pruneHistory(t.db, new Date(Date.now() - 30 * DAY))).toBe(0);
});

test('neither the retention nor the archiving of idle accounts runs unless configured', () => {
  const deps = { db: t.db, logger: pino({ level: 'silent' }), config: t.config };
  expect(retentionTasks(deps)).toEqual({ tasks: {} });
  expect(idleTasks(deps)).toEqual({ tasks: {} });
  const on = {
    ...deps,
    config: { ...t.config, episodeHistoryRetentionDays: 90, archiveIdleAfterDays: 365, archiveDir: '/a' },
  };
  expect(retentionTasks(on).crontab).toEqual(['0 4 * * * prune_episode_history']);
  expect(idleTasks(on).crontab).toEqual(['30 3 * * * archive_idle_accounts']);
});
