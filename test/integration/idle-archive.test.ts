import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import request from 'supertest';
import * as archiving from '../../src/auth/archiving';
import { signInVouched } from '../../src/auth/identities';
import { addUser, createAppPasswordFor } from '../../src/auth/service';
import { AccountArchived, InvalidInput } from '../../src/errors';
import { DEFAULT_KEEP as KEEP } from '../../src/transfer/archive';
import {
  archiveIdle,
  archiveText,
  exportArchive,
  forgetArchived,
  parseArchive,
  restoreArchived,
  runImport,
} from '../../src/transfer/service';
import { as, testApp, type TestApp, type TestUser } from '../helpers/app';
import { rowsOfUser } from '../helpers/db';
import { csrfOf } from '../helpers/web';
import { tempDirForFile } from '../helpers/tmp';

// Idle accounts (docs/idle-accounts.md): an idle user's archive kept in the database (a copy in a folder
// when asked) and read back before the user is removed, their sign-in answered with how to bring the
// account back, and the restore as it was, by any instance: none needs the folder of another.

let t: TestApp;
let admin: Pick<TestApp, 'db' | 'authCache'>;
beforeAll(async () => {
  t = await testApp();
  // The app's own cache of credentials: what the server's listener empties when an account is archived.
  admin = { db: t.db, authCache: t.authCache };
});
afterAll(() => t.close());

const tmp = tempDirForFile('castsync-idle-');
const folder = () => mkdtempSync(path.join(tmp, 'folder-'));
const LONG_AGO = new Date('2023-01-01T00:00:00Z');
const IDLE_SINCE = new Date('2024-01-01T00:00:00Z');
const restoreOpts = { keep: KEEP, progress: () => undefined };

/** Makes the user look last active on LONG_AGO: created, changed, seen and signed in then. */
async function makeIdle(userId: number): Promise<void> {
  await t.db.query('UPDATE users SET created_at = $2, last_change = $2 WHERE id = $1', [userId, LONG_AGO]);
  await t.db.query('UPDATE tokens SET created_at = $2 WHERE user_id = $1', [userId, LONG_AGO]);
  await t.db.query('UPDATE user_activity SET seen_at = $2 WHERE user_id = $1', [userId, LONG_AGO]);
}

/** Rows with this user id, in the tables that have any. */
const rowsOf = async (userId: number) =>
  Object.fromEntries(Object.entries(await rowsOfUser(t.db, userId)).filter(([, n]) => n > 0));

/** A user with something of everything the archive holds: records with history, devices, actions, favourites, Up next. */
async function busyUser(prefix: string): Promise<TestUser & { appPassword: string }> {
  const u = await t.user(prefix);
  const api = as(t, u);
  const feed = 'https://idle.example/feed';
  expect((await api.post(`/api/2/devices/${u.name}/phone.json`, { caption: 'My phone', type: 'mobile' })).status).toBe(
    200,
  );
  const up = await api.post(`/api/2/subscriptions/${u.name}/phone.json`, {
    add: [feed, 'https://idle.example/other', 'https://idle.example/gone'],
    remove: [],
  });
  expect(up.status).toBe(200);
  await api.post(`/api/2/subscriptions/${u.name}/phone.json`, { add: [], remove: ['https://idle.example/gone'] });
  const records = (await api.get('/v1/subscriptions')).body.subscriptions as { guid: string; feed_url: string }[];
  const other = records.find((r) => r.feed_url === 'https://idle.example/other')!;
  const moved = await api.patch(`/v1/subscriptions/${other.guid}`, { new_feed_url: 'https://idle.example/moved' });
  expect(moved.status).toBe(200);
  const episode = (n: number) => `https://idle.example/${n}.mp3`;
  const actions = await api.post(`/api/2/episodes/${u.name}.json`, [
    { podcast: feed, episode: episode(1), action: 'download', timestamp: '2022-05-01T10:00:00', device: 'phone' },
    { podcast: feed, episode: episode(1), action: 'play', position: 60, started: 0, total: 1800, device: 'phone' },
    { podcast: feed, episode: episode(2), action: 'new', timestamp: '2022-05-02T10:00:00', guid: 'ep-2' },
  ]);
  expect(actions.status).toBe(200);
  const star = await api.post('/v1/episodes', [
    {
      podcast_url: feed,
      enclosure_url: episode(1),
      favorite_status: { value: true, timestamp: '2022-05-03T10:00:00Z' },
    },
  ]);
  expect(star.body.failure).toEqual([]);
  for (const n of [2, 1]) {
    expect((await api.post('/v1/queue/items', { podcast_url: feed, enclosure_url: episode(n) })).status).toBe(201);
  }
  const app = await createAppPasswordFor({ db: t.db }, u.name, 'old phone');
  return { ...u, appPassword: app.token };
}

/**
 * An archive without the time it was written, and without its records' subscription_changed: what two
 * archives of the same data share (a restore stamps the records it writes with its own time, so that every
 * app of the user sees them at its next sync).
 */
const content = async (userId: number, name: string) => {
  const archive = { ...(await exportArchive(t.db, userId, name)), exported_at: '' };
  return { ...archive, subscriptions: archive.subscriptions.map((s) => ({ ...s, subscription_changed: '' })) };
};

/** A user with a subscription and a play, made to look last active on LONG_AGO. */
async function plainIdleUser(prefix: string): Promise<TestUser> {
  const u = await t.user(prefix);
  const api = as(t, u);
  await api.post(`/api/2/subscriptions/${u.name}/phone.json`, { add: [`https://${u.name}.example/feed`], remove: [] });
  await api.post(`/api/2/episodes/${u.name}.json`, [
    {
      podcast: `https://${u.name}.example/feed`,
      episode: `https://${u.name}.example/1.mp3`,
      action: 'play',
      position: 7,
    },
  ]);
  await makeIdle(u.id);
  return u;
}

/**
 * Every one of the users is archived, in the database with a copy in DIR/NAME.json that is there and
 * theirs, and the restore brings them back from the database.
 */
async function expectRestorable(users: TestUser[], dir: string): Promise<void> {
  for (const u of users) {
    const file = path.join(dir, `${u.name}.json`);
    expect(await archiving.archivedAccount(t.db, u.name)).toMatchObject({ file, inDatabase: true });
    expect(parseArchive(readFileSync(file, 'utf8')).user).toBe(u.name);
    const back = await restoreArchived(admin, u.name, restoreOpts);
    expect(back).toMatchObject({ how: 'revived', file: undefined });
    expect([back.summary.feeds.added, back.summary.actions.added]).toEqual([1, 1]);
  }
}

/** What archiveUser is given to keep, as an archive run gives it, the read back accepting what it reads. */
const keeping = async (u: TestUser, file: string | null = null): Promise<archiving.Kept> => ({
  archive: gzipSync(archiveText(await exportArchive(t.db, u.id, u.name))),
  file,
  readBack: async () => undefined,
});

describe('archive and restore', () => {
  test('an idle user: archive kept in the database (a copy in a folder) and read back, then the user removed; restored as it was by an instance without that folder', async () => {
    const u = await busyUser('idle');
    const active = await busyUser('active');
    const before = await content(u.id, u.name);
    const raw = { ...(await exportArchive(t.db, u.id, u.name)), exported_at: '' };
    const activeBefore = await content(active.id, active.name);
    expect(before).toMatchObject({
      devices: [{ id: 'phone', caption: 'My phone', type: 'mobile' }],
      subscriptions: expect.arrayContaining([expect.objectContaining({ other_urls: ['https://idle.example/other'] })]),
    });
    expect([before.subscriptions.length, before.episode_actions.length, before.favourites.length]).toEqual([3, 3, 1]);
    expect(before.queue).toHaveLength(2);
    await makeIdle(u.id);

    const dir = folder();
    const run = await archiveIdle(admin, { before: IDLE_SINCE, dir });
    expect(run.idle.map((i) => i.username)).toEqual([u.name]);
    const file = path.join(dir, `${u.name}.json`);
    expect(run.outcomes).toEqual([
      expect.objectContaining({
        username: u.name,
        file,
        removed: true,
        counts: { subscriptions: 3, actions: 3, devices: 1, favourites: 1, queue: 2 },
      }),
    ]);
    // The database keeps the archive castsync export writes; the copy is that same text, readable by its
    // owner only; no temporary file stays.
    const stored = gunzipSync((await archiving.storedArchive(t.db, u.name))!).toString('utf8');
    expect({ ...parseArchive(stored), exported_at: '' }).toEqual(raw);
    expect(readFileSync(file, 'utf8')).toBe(stored);
    expect(readdirSync(dir)).toEqual([`${u.name}.json`]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // Nothing of the user is left but the archived account; the active user is as they were.
    expect(await rowsOf(u.id)).toEqual({});
    expect(await archiving.archivedAccount(t.db, u.name)).toMatchObject({ username: u.name, file, inDatabase: true });
    expect(await content(active.id, active.name)).toEqual(activeBefore);
    expect((await as(t, active).get('/v1/subscriptions')).status).toBe(200);

    // Another instance (another pod) does not see this one's folder: the restore reads the database.
    rmSync(dir, { recursive: true });
    const back = await restoreArchived(admin, u.name, restoreOpts);
    expect(back).toMatchObject({ how: 'revived', hasPassword: true, appPasswords: 1, file: undefined });
    expect(back.summary.actions).toMatchObject({ total: 3, added: 3, refused: [] });
    expect(await content(back.userId, u.name)).toEqual(before);
    expect(await archiving.archivedAccount(t.db, u.name)).toBeUndefined();
    // The person signs in as before: the password, and the app password their app kept.
    expect((await as(t, u).get(`/api/2/devices/${u.name}.json`)).status).toBe(200);
    const app = 'Basic ' + Buffer.from(`${u.name}:${u.appPassword}`).toString('base64');
    expect((await as(t, app).get('/v1/subscriptions')).status).toBe(200);
  });

  test("import archive into a new user brings the same data; the restore takes only the named user's archive", async () => {
    const u = await busyUser('copied');
    const before = await content(u.id, u.name);
    const file = await writtenArchive(u);
    const fresh = await t.user('fresh');
    await expect(restoreArchived(admin, fresh.name, { ...restoreOpts, file })).rejects.toThrow(
      `${file} is the archive of ${u.name}, not of ${fresh.name}`,
    );
    const summary = await importFile(fresh.id, file);
    expect(summary.feeds).toMatchObject({ total: 3, added: 3 });
    expect({ ...(await content(fresh.id, fresh.name)), user: u.name }).toEqual(before);
  });

  test('a restore without an archived account makes the user without a password; an existing user is refused', async () => {
    const u = await busyUser('nopass');
    const file = await writtenArchive(u);
    const before = await content(u.id, u.name);
    await t.db.query('DELETE FROM users WHERE id = $1', [u.id]);
    await t.db.query('DELETE FROM subscriptions WHERE user_id = $1', [u.id]);
    const back = await restoreArchived(admin, u.name, { ...restoreOpts, file });
    expect(back).toMatchObject({ how: 'new', hasPassword: false });
    expect(await content(back.userId, u.name)).toEqual(before);
    await expect(restoreArchived(admin, u.name, { ...restoreOpts, file })).rejects.toThrow(
      `User ${u.name} exists and is not archived`,
    );
  });

  test('an archive that cannot be written removes nothing, and the run stops there', async () => {
    const first = await busyUser('fail');
    const second = await busyUser('failz');
    const before = [await content(first.id, first.name), await content(second.id, second.name)];
    const rows = [await rowsOf(first.id), await rowsOf(second.id)];
    await makeIdle(first.id);
    await makeIdle(second.id);
    // The archive's name is taken by a folder: the file cannot be put there.
    const dir = folder();
    mkdirSync(path.join(dir, `${first.name}.json`));
    const failed = archiveIdle(admin, { before: IDLE_SINCE, dir });
    await expect(failed).rejects.toThrow(InvalidInput);
    await expect(failed).rejects.toThrow(
      new RegExp(
        `^Could not write the archive .*${first.name}\\.json \\(EISDIR\\): nothing of ${first.name} was removed$`,
      ),
    );
    expect(readdirSync(dir)).toEqual([`${first.name}.json`]);
    expect([await rowsOf(first.id), await rowsOf(second.id)]).toEqual(rows);
    expect([await content(first.id, first.name), await content(second.id, second.name)]).toEqual(before);
    expect(await archiving.archivedAccount(t.db, first.name)).toBeUndefined();

    // A folder this process may not write to (unless it runs as root, which writes anyway).
    if (process.getuid?.() !== 0) {
      const locked = folder();
      chmodSync(locked, 0o500);
      await expect(archiveIdle(admin, { before: IDLE_SINCE, dir: locked })).rejects.toThrow(/\(EACCES\)/);
      expect(await rowsOf(first.id)).toEqual(rows[0]);
    }
    await expect(archiveIdle(admin, { before: IDLE_SINCE, dir: path.join(dir, 'none') })).rejects.toThrow(
      /^No folder .* nothing was removed$/,
    );
    await t.db.query('UPDATE users SET last_change = now() WHERE id = ANY ($1)', [[first.id, second.id]]);
  });

  test('a user who writes or signs in while being archived is left as they are', async () => {
    const u = await busyUser('busy');
    await makeIdle(u.id);
    const [found] = (await archiving.idleUsers(t.db, IDLE_SINCE)).filter((i) => i.username === u.name);
    expect(found).toBeDefined();
    // A write after the archive was read: the stamp it found is not the user's any more.
    await as(t, u).post(`/api/2/subscriptions/${u.name}/phone.json`, { add: ['https://idle.example/new'], remove: [] });
    expect(await archiving.archiveUser(admin, found!, IDLE_SINCE, await keeping(u))).toBe(false);
    // A sign-in after it (a new session), with the stamp as it was: active again.
    await makeIdle(u.id);
    const [again] = (await archiving.idleUsers(t.db, IDLE_SINCE)).filter((i) => i.username === u.name);
    await request(t.app).post('/v1/auth/login').send({ username: u.name, password: u.password }).expect(200);
    expect(await archiving.archiveUser(admin, again!, IDLE_SINCE, await keeping(u))).toBe(false);
    expect(await archiving.archivedAccount(t.db, u.name)).toBeUndefined();
    expect((await rowsOf(u.id)).episode_actions).toBe(3);
  });

  test('a request signed by the user notes them as active: no longer idle', async () => {
    const u = await t.user('seen');
    await makeIdle(u.id);
    expect((await archiving.idleUsers(t.db, IDLE_SINCE)).map((i) => i.username)).toContain(u.name);
    expect((await as(t, u).get('/v1/subscriptions')).status).toBe(200);
    expect((await archiving.idleUsers(t.db, IDLE_SINCE)).map((i) => i.username)).not.toContain(u.name);
  });

  test('two archive runs at once on one folder: one archives, the other changes nothing; every archived account restores', async () => {
    const users = [];
    for (let i = 0; i < 8; i++) users.push(await plainIdleUser('twice'));
    const dir = folder();
    const runs = await Promise.allSettled([0, 1].map(() => archiveIdle(admin, { before: IDLE_SINCE, dir })));
    for (const r of runs) {
      if (r.status === 'rejected') expect((r.reason as Error).message).toMatch(/^Another archive run is under way/);
    }
    expect(runs.some((r) => r.status === 'fulfilled')).toBe(true);
    await expectRestorable(users, dir);
  });

  test('a user another run archived meanwhile stops this run, and their file stays as that run wrote it', async () => {
    const [first, second] = [await plainIdleUser('meanwhilea'), await plainIdleUser('meanwhileb')];
    const dir = folder();
    const secondFile = path.join(dir, `${second.name}.json`);
    const real = archiving.archiveUser;
    // As a run beside this one (were it not refused) would: while this run removes the first user, it
    // writes the second's file and removes the second.
    const archiveUser = jest.spyOn(archiving, 'archiveUser').mockImplementation(async (ctx, idle, before, file) => {
      if (idle.username === first.name) {
        const [other] = (await archiving.idleUsers(t.db, IDLE_SINCE)).filter((i) => i.username === second.name);
        writeFileSync(secondFile, archiveText(await exportArchive(t.db, second.id, second.name)));
        expect(await real(ctx, other!, before, await keeping(second, secondFile))).toBe(true);
      }
      return real(ctx, idle, before, file);
    });
    try {
      await expect(archiveIdle(admin, { before: IDLE_SINCE, dir })).rejects.toThrow(
        `${second.name} was archived meanwhile by another run: this one stopped there`,
      );
    } finally {
      archiveUser.mockRestore();
    }
    await expectRestorable([first, second], dir);
  });

  test('a user left as they were loses the file this run wrote, but never one an archived account names', async () => {
    const [left, taken] = [await plainIdleUser('lefta'), await plainIdleUser('leftb')];
    const dir = folder();
    const real = archiving.archiveUser;
    // The first user becomes active before their removal; the second is archived by another run at that
    // very moment, to the file this run wrote, and so is not removed by this one.
    const archiveUser = jest.spyOn(archiving, 'archiveUser').mockImplementation(async (ctx, idle, before, file) => {
      if (idle.username === left.name) {
        await t.db.query('UPDATE users SET last_change = now() WHERE id = $1', [left.id]);
      } else if (idle.username === taken.name) {
        expect(await real(ctx, idle, before, file)).toBe(true);
      }
      return real(ctx, idle, before, file);
    });
    try {
      const run = await archiveIdle(admin, { before: IDLE_SINCE, dir });
      expect(run.outcomes.filter((o) => [left.name, taken.name].includes(o.username)).map((o) => o.removed)).toEqual([
        false,
        false,
      ]);
    } finally {
      archiveUser.mockRestore();
    }
    expect(existsSync(path.join(dir, `${left.name}.json`))).toBe(false);
    await expectRestorable([taken], dir);
  });

  test('a run whose lock goes with its connection (a restart of the database) stops there; the next run completes it', async () => {
    const [first, second] = [await plainIdleUser('lockgonea'), await plainIdleUser('lockgoneb')];
    const dir = folder();
    const real = archiving.archiveUser;
    // Right after the first removal, the connection that holds the run's lock ends, as in a restart.
    const archiveUser = jest.spyOn(archiving, 'archiveUser').mockImplementation(async (ctx, idle, before, file) => {
      const removed = await real(ctx, idle, before, file);
      if (idle.username === first.name) {
        await t.db.query(
          `SELECT pg_terminate_backend(pid) FROM pg_locks
            WHERE locktype = 'advisory' AND classid = $1 AND objid = 0 AND objsubid = 2`,
          [0x63736172],
        );
      }
      return removed;
    });
    try {
      await expect(archiveIdle(admin, { before: IDLE_SINCE, dir })).rejects.toThrow(
        /^The archive run lost its lock on the database \(.+\): it stopped there$/,
      );
    } finally {
      archiveUser.mockRestore();
    }
    expect(existsSync(path.join(dir, `${second.name}.json`))).toBe(false);
    expect(await archiving.archivedAccount(t.db, second.name)).toBeUndefined();
    await archiveIdle(admin, { before: IDLE_SINCE, dir });
    await expectRestorable([first, second], dir);
  });

  test('an account archived by an earlier release (its file only): a restore whose file is gone says so, changes nothing, and the archived account stays', async () => {
    const u = await plainIdleUser('lost');
    const dir = folder();
    await archiveIdle(admin, { before: IDLE_SINCE, dir });
    await t.db.query('UPDATE archived_accounts SET archive = NULL WHERE username = $1', [u.name]);
    const file = path.join(dir, `${u.name}.json`);
    const moved = path.join(folder(), 'moved.json');
    renameSync(file, moved);
    const failed = restoreArchived(admin, u.name, restoreOpts);
    await expect(failed).rejects.toThrow(InvalidInput);
    await expect(failed).rejects.toThrow(
      `Cannot restore ${u.name}: there is no file ${file}. Nothing was changed, and ${u.name} stays archived; ` +
        `if the file was moved, name it: castsync users restore ${u.name} --file FILE`,
    );
    expect(await archiving.archivedAccount(t.db, u.name)).toMatchObject({ file, inDatabase: false });
    expect((await t.db.query('SELECT 1 FROM users WHERE username = $1', [u.name])).rowCount).toBe(0);
    expect(await restoreArchived(admin, u.name, { ...restoreOpts, file: moved })).toMatchObject({ how: 'revived' });
  });

  test('an archive that does not read back from the database removes nothing: the transaction is rolled back', async () => {
    const u = await plainIdleUser('garbled');
    const rows = await rowsOf(u.id);
    const real = archiving.archiveUser;
    // What the database would give back, were it not what was written.
    const archiveUser = jest
      .spyOn(archiving, 'archiveUser')
      .mockImplementation(async (ctx, idle, before, kept) =>
        real(ctx, idle, before, { ...kept, readBack: () => kept.readBack(gzipSync('{"format": "other"}')) }),
      );
    try {
      await expect(archiveIdle(admin, { before: IDLE_SINCE })).rejects.toThrow(
        `The archive of ${u.name} did not read back from the database: nothing of ${u.name} was removed`,
      );
    } finally {
      archiveUser.mockRestore();
    }
    expect(await rowsOf(u.id)).toEqual(rows);
    expect(await archiving.archivedAccount(t.db, u.name)).toBeUndefined();
    await t.db.query('UPDATE users SET last_change = now() WHERE id = $1', [u.id]);
  });

  test('an archived account is forgotten only once its archive is kept in a file, which import archive takes', async () => {
    const u = await plainIdleUser('forgot');
    const before = await content(u.id, u.name);
    await archiveIdle(admin, { before: IDLE_SINCE });
    expect(await archiving.archivedAccount(t.db, u.name)).toMatchObject({ file: null, inDatabase: true });
    await expect(forgetArchived(admin, u.name, undefined)).rejects.toThrow(
      `The archive of ${u.name} is kept in the database only: name a file to keep it in ` +
        `(castsync users forget-archived ${u.name} --file FILE); nothing was changed`,
    );
    expect(await archiving.archivedAccount(t.db, u.name)).toBeDefined();
    const file = path.join(folder(), 'kept.json');
    await forgetArchived(admin, u.name, file);
    expect(await archiving.archivedAccount(t.db, u.name)).toBeUndefined();
    const fresh = await t.user('forgotten');
    await importFile(fresh.id, file);
    expect({ ...(await content(fresh.id, fresh.name)), user: u.name }).toEqual(before);
  });

  test('a dry run lists the idle users and changes nothing; a date to come is refused', async () => {
    const u = await t.user('dry');
    await makeIdle(u.id);
    const dir = folder();
    const run = await archiveIdle(admin, { before: IDLE_SINCE, dir, dryRun: true });
    expect(run.idle.map((i) => i.username)).toContain(u.name);
    expect(run.outcomes).toEqual([]);
    expect(readdirSync(dir)).toEqual([]);
    expect((await t.db.query('SELECT 1 FROM users WHERE id = $1', [u.id])).rowCount).toBe(1);
    await expect(archiveIdle(admin, { before: new Date(Date.now() + 60_000), dir })).rejects.toThrow('not in the past');
  });
});

/** `import archive FILE` into the user. */
const importFile = (userId: number, file: string) =>
  runImport(
    t.db,
    userId,
    { source: 'archive', document: readFileSync(file, 'utf8') },
    {
      dryRun: false,
      policy: { allowPrivate: false, allowCidrs: [] },
      limits: { timeoutMs: 1000, maxBytes: 1e6, totalMs: 1000, totalBytes: 1e6 },
      ...restoreOpts,
    },
  );

/** Writes the user's archive to a file, as castsync export does: its name. */
async function writtenArchive(u: TestUser): Promise<string> {
  const file = path.join(folder(), `${u.name}.json`);
  writeFileSync(file, archiveText(await exportArchive(t.db, u.id, u.name)));
  return file;
}

describe('signing in to an archived account', () => {
  let u: TestUser & { appPassword: string };
  const archivedMessage = () =>
    new RegExp(`^The account ${u.name} was archived on \\d{4}-\\d{2}-\\d{2} .*castsync users restore ${u.name}`);
  const basic = (name: string, password: string) => 'Basic ' + Buffer.from(`${name}:${password}`).toString('base64');
  beforeAll(async () => {
    u = await busyUser('gone');
    await signInVouched(
      t.db,
      { username: u.name, provider: { issuer: 'https://id.example', subject: 'gone' } },
      { createUsers: false },
    );
    await makeIdle(u.id);
    const run = await archiveIdle(admin, { before: IDLE_SINCE });
    expect(run.outcomes.find((o) => o.username === u.name)).toMatchObject({ removed: true, file: null });
  });

  test('the web page says the account is archived and how to bring it back; a wrong password learns nothing', async () => {
    const agent = request.agent(t.app);
    const page = await agent.get('/');
    const signIn = (password: string) =>
      agent
        .post('/web/sign-in')
        .type('form')
        .send({ _csrf: csrfOf(page.text), username: u.name, password });
    const refused = await signIn(u.password);
    expect(refused.status).toBe(403);
    expect(refused.text).toContain(`The account ${u.name} was archived on`);
    expect(refused.text).toContain(`castsync users restore ${u.name}`);
    expect(refused.text).toContain('name="password"');
    const wrong = await signIn('not-the-password');
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('Wrong username or password.');
    expect(wrong.text).not.toContain('archived');
  });

  test('gpodder and Nextcloud apps get 401 saying so, with the password or an app password', async () => {
    for (const password of [u.password, u.appPassword]) {
      for (const path of [`/api/2/devices/${u.name}.json`, '/index.php/apps/gpoddersync/subscriptions']) {
        const r = await request(t.app).get(path).set('Authorization', basic(u.name, password));
        expect([r.status, r.headers['www-authenticate']]).toEqual([401, 'Basic realm="castsync"']);
        expect(r.body.message).toMatch(archivedMessage());
      }
    }
    const wrong = await request(t.app)
      .get(`/api/2/devices/${u.name}.json`)
      .set('Authorization', basic(u.name, 'nope-nope'));
    expect([wrong.status, wrong.body.message]).toEqual([401, 'User not authorized']);
  });

  test('OPA apps get 401 saying so: Basic, an app password as a bearer token, and a login', async () => {
    for (const authorization of [basic(u.name, u.password), `Bearer ${u.appPassword}`]) {
      const r = await request(t.app).get('/v1/subscriptions').set('Authorization', authorization);
      expect(r.status).toBe(401);
      expect(r.headers['www-authenticate']).toMatch(/Bearer/);
      expect(r.body.message).toMatch(archivedMessage());
    }
    const login = await request(t.app).post('/v1/auth/login').send({ username: u.name, password: u.password });
    expect(login.status).toBe(401);
    expect(login.body.message).toMatch(archivedMessage());
    const wrong = await request(t.app).post('/v1/auth/login').send({ username: u.name, password: 'nope-nope' });
    expect([wrong.status, wrong.body.message]).toEqual([401, 'User not authorized']);
  });

  test('single sign-on says so too, and the name is not given to anyone else', async () => {
    await expect(
      signInVouched(
        t.db,
        { username: u.name, provider: { issuer: 'https://id.example', subject: 'gone' } },
        { createUsers: true },
      ),
    ).rejects.toThrow(AccountArchived);
    await expect(addUser({ db: t.db }, u.name, 'a-new-password')).rejects.toThrow(
      `User ${u.name} already exists, archived`,
    );
    expect(await t.db.query('SELECT 1 FROM users WHERE username = $1', [u.name])).toMatchObject({ rowCount: 0 });
  });

  test('single sign-on of the same person, renamed at the provider, says so too: no new user takes their link', async () => {
    const renamed = { username: `${u.name}-renamed`, provider: { issuer: 'https://id.example', subject: 'gone' } };
    await expect(signInVouched(t.db, renamed, { createUsers: true })).rejects.toThrow(archivedMessage());
    expect(await t.db.query('SELECT 1 FROM users WHERE username = $1', [renamed.username])).toMatchObject({
      rowCount: 0,
    });
  });

  test('restored, the person signs in as before (identity link too)', async () => {
    await restoreArchived(admin, u.name, restoreOpts);
    expect((await request(t.app).get('/v1/subscriptions').set('Authorization', `Bearer ${u.appPassword}`)).status).toBe(
      200,
    );
    const r = await t.db.query(
      `SELECT u.username FROM user_identities i JOIN users u ON u.id = i.user_id WHERE i.issuer = 'https://id.example' AND i.subject = 'gone'`,
    );
    expect(r.rows).toEqual([{ username: u.name }]);
  });
});
