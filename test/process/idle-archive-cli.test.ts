import { mkdirSync, mkdtempSync, readFileSync, rmdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { as, testApp, type TestApp, type TestUser } from '../helpers/app';
import { cliAsync } from '../helpers/process';

// castsync users archive and users restore as an administrator runs them: what they print, the exit status,
// and the archive file as `import archive` takes it.

let t: TestApp;
let env: Record<string, string>;
beforeAll(async () => {
  t = await testApp();
  env = { DATABASE_URL: t.url, LOG_LEVEL: 'warn' };
});
afterAll(() => t.close());

const LONG_AGO = new Date('2023-01-01T00:00:00Z');

/** A user with a subscription and a play, made to look last active on LONG_AGO. */
async function idleUser(): Promise<TestUser> {
  const u = await t.user('cliidle');
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

test('archive: a dry run, a folder that cannot take the file (exit 1, nothing removed), then the archive; restore; import archive into a new user', async () => {
  const u = await idleUser();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'castsync-cli-idle-'));
  const file = path.join(dir, `${u.name}.json`);
  const archive = ['users', 'archive', '--idle-since', '2024-01-01', '--dir', dir];

  const dry = await cliAsync([...archive, '--dry-run'], env);
  expect(dry).toEqual({
    status: 0,
    stdout:
      `Dry run: nothing was changed. 1 account idle since 2024-01-01 would be archived into ${dir}:\n` +
      `  ${u.name}\tlast active 2023-01-01T00:00:00.000Z\n`,
    stderr: '',
  });
  expect(await cliAsync(['users', 'archive', '--idle-since', '2024-01-01'], env)).toEqual({
    status: 1,
    stdout: '',
    stderr: 'castsync: Name the folder of the archives: --dir DIR (or set ARCHIVE_DIR)\n',
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
      `0 favourites, 0 in Up next in ${file}\n` +
      `1 of 1 account idle since 2024-01-01 archived into ${dir}\n`,
    stderr: '',
  });
  expect(await exists(u.name)).toBe(false);
  expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ format: 'castsync-archive', user: u.name });
  const listed = await cliAsync(['user', 'archived'], env);
  expect(listed.stdout).toMatch(new RegExp(`^${u.name}\\tarchived \\d{4}-\\d{2}-\\d{2}\\tlast active 2023-01-01\\t`));
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
  expect(restored.stdout).toContain(`Imported the archive ${file} into ${u.name}:\n`);
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
