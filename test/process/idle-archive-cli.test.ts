import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { archivedAccount } from '../../src/auth/archiving';
import { loadConfig } from '../../src/config';
import { DEFAULT_KEEP } from '../../src/transfer/archive';
import { ARCHIVE_IDLE_TASK, idleTasks } from '../../src/transfer/idle';
import { restoreArchived } from '../../src/transfer/service';
import { as, testApp, type TestApp, type TestUser } from '../helpers/app';
import { capturedLogger } from '../helpers/logs';
import { basicAuth, call, cliAsync, cliWatched, startServer, stopServer } from '../helpers/process';
import { tempDirForFile } from '../helpers/tmp';

// castsync users archive and users restore as an administrator runs them: what they print, the exit status,
// and the archive's copy as `import archive` takes it; the nightly job of a worker instance keeping the
// archives in the database, where another instance restores them.

let t: TestApp;
let env: Record<string, string>;
beforeAll(async () => {
  t = await testApp();
  env = { DATABASE_URL: t.url, LOG_LEVEL: 'warn' };
});
afterAll(() => t.close());
const tmp = tempDirForFile('castsync-cli-');

const LONG_AGO = new Date('2023-01-01T00:00:00Z');

/** A user with a subscription and a play, made to look last active on LONG_AGO. */
async function idleUser(prefix = 'cliidle'): Promise<TestUser> {
  const u = await t.user(prefix);
  const api = as(t, u);
  await api.post(`/api/2/subscriptions/${u.name}/phone.json`, { add: ['https://cli.example/feed'], remove: [] });
  await api.post(`/api/2/episodes/${u.name}.json`, [
    { podcast: 'https://cli.example/feed', episode: 'https://cli.example/1.mp3', action: 'play', position: 7 },
  ]);
  await t.db.query('UPDATE users SET created_at = $2, last_change = $2 WHERE id = $1', [u.id, LONG_AGO]);
  await t.db.query('UPDATE tokens SET created_at = $2 WHERE user_id = $1', [u.id, LONG_AGO]);
  await t.db.query('UPDATE user_activity SET seen_at = $2 WHERE user_id = $1', [u.id, LONG_AGO]);
  return u;
}

const exists = async (name: string) =>
  (await t.db.query('SELECT 1 FROM users WHERE username = $1', [name])).rowCount === 1;

test('archive with copies in a folder: a dry run, a folder that cannot take the file (exit 1, nothing removed), then the archive; restore; import archive of the copy into a new user', async () => {
  const u = await idleUser();
  const dir = mkdtempSync(path.join(tmp, 'idle-'));
  const file = path.join(dir, `${u.name}.json`);
  const archive = ['users', 'archive', '--idle-since', '2024-01-01', '--dir', dir];

  const dry = await cliAsync([...archive, '--dry-run'], env);
  expect(dry).toEqual({
    status: 0,
    stdout:
      `Dry run: nothing was changed. 1 account idle since 2024-01-01 would be archived in the database, ` +
      `with copies in ${dir}:\n  ${u.name}\tlast active 2023-01-01T00:00:00.000Z\n`,
    stderr: '',
  });

  mkdirSync(file);
  const blocked = await cliAsync(archive, env);
  expect(blocked).toEqual({
    status: 1,
    stdout: '',
    stderr: `castsync: Could not write the archive ${file} (EISDIR): nothing of ${u.name} was removed\n`,
  });
  expect(await exists(u.name)).toBe(true);
  rmdirSync(file);

  const done = await cliAsync(archive, env);
  expect(done).toEqual({
    status: 0,
    stdout:
      `Archived ${u.name} (last active 2023-01-01): 1 subscription records, 1 episode actions, 1 devices, ` +
      `0 favourites, 0 in Up next kept in the database and in ${file}\n` +
      `1 of 1 account idle since 2024-01-01 archived in the database, with copies in ${dir}\n`,
    stderr: '',
  });
  expect(await exists(u.name)).toBe(false);
  expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ format: 'castsync-archive', user: u.name });
  const listed = await cliAsync(['user', 'archived'], env);
  expect(listed.stdout).toMatch(
    new RegExp(`^${u.name}\\tarchived \\d{4}-\\d{2}-\\d{2}\\tlast active 2023-01-01\\tkept in the database and in `),
  );
  expect(await cliAsync(['export', u.name], env)).toMatchObject({
    status: 1,
    stderr: expect.stringMatching(`^castsync: No user ${u.name}: archived on .* \\(castsync users restore ${u.name}`),
  });
  expect(await cliAsync(['user', 'add', u.name, '--password-stdin'], env, 'another-password\n')).toMatchObject({
    status: 1,
    stderr: `castsync: User ${u.name} already exists, archived (castsync users restore ${u.name} brings it back)\n`,
  });

  const restored = await cliAsync(['users', 'restore', u.name], env);
  expect(restored).toMatchObject({ status: 0, stderr: '' });
  expect(restored.stdout).toContain(`Imported the archive kept in the database into ${u.name}:\n`);
  expect(restored.stdout).toContain('  feeds: 1 new of 1');
  expect(restored.stdout).toContain('  actions: 1 new of 1');
  expect(
    restored.stdout.endsWith(`${u.name} is back: they sign in with their password and app passwords as before\n`),
  ).toBe(true);
  expect((await as(t, u).get(`/api/2/devices/${u.name}.json`)).status).toBe(200);

  // The same file into a new user, with import archive.
  expect(await cliAsync(['user', 'add', 'cli-fresh', '--password-stdin'], env, 'a-long-password\n')).toMatchObject({
    status: 0,
  });
  const imported = await cliAsync(['import', 'archive', file, 'cli-fresh'], env);
  expect(imported).toMatchObject({ status: 0, stderr: '' });
  expect(imported.stdout).toContain('  feeds: 1 new of 1');
  expect(imported.stdout).toContain('  actions: 1 new of 1');
});

/** Idle users enough that an archive run is still under way when a second one starts. */
async function manyIdle(prefix: string, n = 40): Promise<TestUser[]> {
  const users: TestUser[] = [];
  for (let i = 0; i < n; i++) users.push(await idleUser(prefix));
  return users;
}

/** Every user is archived, with a copy in DIR/NAME.json that is there, and the restore brings them back. */
async function expectRestorable(users: TestUser[], dir: string): Promise<void> {
  const admin = { db: t.db, authCache: t.authCache };
  const missing = users.filter((u) => !existsSync(path.join(dir, `${u.name}.json`))).map((u) => u.name);
  expect(missing).toEqual([]);
  for (const u of users) {
    const file = path.join(dir, `${u.name}.json`);
    expect(await archivedAccount(t.db, u.name)).toMatchObject({ file });
    const back = await restoreArchived(admin, u.name, { keep: DEFAULT_KEEP, progress: () => undefined });
    expect([back.how, back.summary.feeds.added, back.summary.actions.added]).toEqual(['revived', 1, 1]);
  }
}

const UNDER_WAY =
  'castsync: Another archive run is under way (users archive, or the nightly job): this one changed nothing. ' +
  'Run it again when that one is done\n';

test('two archive commands at once on one folder: the second is refused (or finds nothing left); every archived account restores', async () => {
  const users = await manyIdle('twocli');
  const dir = mkdtempSync(path.join(tmp, 'twice-'));
  const archive = ['users', 'archive', '--idle-since', '2024-01-01', '--dir', dir];
  const first = cliWatched(archive, env);
  await first.printed(/^Archived /m);
  const second = await cliAsync(archive, env);
  expect(await first.done).toMatchObject({ status: 0, stderr: '' });
  // Refused while the first runs; were the first done already, it would find no one idle.
  if (second.status === 1) expect(second).toEqual({ status: 1, stdout: '', stderr: UNDER_WAY });
  else expect(second).toMatchObject({ status: 0, stderr: '', stdout: expect.stringMatching(/^0 of 0 accounts/m) });
  await expectRestorable(users, dir);
});

test('the archive command while the nightly job runs: the job leaves the accounts to it; every archived account restores', async () => {
  const users = await manyIdle('clijob');
  const dir = mkdtempSync(path.join(tmp, 'job-'));
  const config = loadConfig(
    { DATABASE_URL: t.url, ARCHIVE_IDLE_AFTER_DAYS: '365', ARCHIVE_DIR: dir },
    { dotenvFile: false },
  );
  const { logger, lines } = capturedLogger();
  const job = idleTasks({ db: t.db, logger, config }).tasks[ARCHIVE_IDLE_TASK]!;
  const command = cliWatched(['users', 'archive', '--idle-since', '2024-01-01', '--dir', dir], env);
  await command.printed(/^Archived /m);
  await job({}, undefined as never);
  expect(await command.done).toMatchObject({ status: 0, stderr: '' });
  expect(lines.filter((l) => l.msg === 'idle account archived')).toEqual([]);
  expect(lines.map((l) => l.msg)).toEqual([
    expect.stringMatching(/^(idle accounts left to the archive run under way|idle accounts archived)$/),
  ]);
  await expectRestorable(users, dir);
});

test('an account archived by an earlier release (its file only): a restore whose file is gone says so, with no stack trace, and the account stays archived', async () => {
  const u = await idleUser('clilost');
  const dir = mkdtempSync(path.join(tmp, 'lost-'));
  expect((await cliAsync(['users', 'archive', '--idle-since', '2024-01-01', '--dir', dir], env)).status).toBe(0);
  await t.db.query('UPDATE archived_accounts SET archive = NULL WHERE username = $1', [u.name]);
  const file = path.join(dir, `${u.name}.json`);
  const moved = path.join(dir, 'elsewhere.json');
  renameSync(file, moved);
  expect(await cliAsync(['users', 'restore', u.name], env)).toEqual({
    status: 1,
    stdout: '',
    stderr:
      `castsync: Cannot restore ${u.name}: there is no file ${file}. Nothing was changed, and ${u.name} stays ` +
      `archived; if the file was moved, name it: castsync users restore ${u.name} --file FILE\n`,
  });
  expect((await cliAsync(['users', 'archived'], env)).stdout).toContain(`${u.name}\tarchived `);
  expect(await cliAsync(['users', 'restore', u.name, '--file', moved], env)).toMatchObject({ status: 0, stderr: '' });
});

test("the nightly job of a worker instance, without a folder, keeps the archives in the database: another instance's command restores them, and a web instance answers the archived sign-in", async () => {
  const u = await idleUser('clinight');
  const worker = await startServer({ ...env, WORKER: 'true', FEED_FETCH: 'false', ARCHIVE_IDLE_AFTER_DAYS: '365' });
  const webOnly = await startServer({ ...env, WORKER: 'false', FEED_FETCH: 'false' });
  try {
    await t.db.query("SELECT graphile_worker.add_job('archive_idle_accounts')");
    let archived;
    for (let i = 0; i < 200 && !(archived = await archivedAccount(t.db, u.name)); i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(archived).toMatchObject({ file: null, inDatabase: true });
    const signIn = await call(webOnly.origin, 'GET', '/v1/subscriptions', basicAuth(u.name, u.password));
    expect(signIn.status).toBe(401);
    expect(signIn.body.message).toMatch(new RegExp(`^The account ${u.name} was archived on `));
    expect((await cliAsync(['users', 'archived'], env)).stdout).toContain(`${u.name}\tarchived `);
    expect(await cliAsync(['users', 'forget-archived', u.name], env)).toEqual({
      status: 1,
      stdout: '',
      stderr:
        `castsync: The archive of ${u.name} is kept in the database only: name a file to keep it in ` +
        `(castsync users forget-archived ${u.name} --file FILE); nothing was changed\n`,
    });
    const restored = await cliAsync(['users', 'restore', u.name], env);
    expect(restored).toMatchObject({ status: 0, stderr: '' });
    expect(restored.stdout).toContain(`Imported the archive kept in the database into ${u.name}:\n`);
    expect(restored.stdout).toContain('  actions: 1 new of 1');
    expect(
      (await call(webOnly.origin, 'GET', `/api/2/devices/${u.name}.json`, basicAuth(u.name, u.password))).status,
    ).toBe(200);
  } finally {
    await Promise.all([stopServer(worker), stopServer(webOnly)]);
  }
});

test('a worker that would write archive copies to a folder it cannot write to does not start', async () => {
  const missing = path.join(os.tmpdir(), 'castsync-no-such-folder');
  const start = startServer({
    ...env,
    WORKER: 'true',
    FEED_FETCH: 'false',
    ARCHIVE_IDLE_AFTER_DAYS: '365',
    ARCHIVE_DIR: missing,
  });
  await expect(start).rejects.toThrow(`No folder ${missing} to write the archives to`);
});
