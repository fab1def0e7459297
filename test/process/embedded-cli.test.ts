import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cli, cliAsync } from '../helpers/process';

// Commands of the CLI run at once on the embedded PostgreSQL, without a server (a script's, or cron's,
// beside a person's): each either starts the cluster or waits for the one that did to finish with it.
const dataDir = mkdtempSync(path.join(tmpdir(), 'castsync-embedded-cli-'));
const env = { DATA_DIR: dataDir };

afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

test('commands run at once on the embedded PostgreSQL all succeed, and leave it stopped', async () => {
  expect(cli(['user', 'add', 'alice', '--password-stdin'], env, 'alice-password\n').status).toBe(0);
  for (let round = 0; round < 3; round++) {
    const runs = await Promise.all(Array.from({ length: 4 }, () => cliAsync(['user', 'list'], env)));
    for (const r of runs) {
      expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
      expect(r.stdout).toMatch(/^alice\t0 subscriptions/);
    }
  }
  expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
}, 120_000);

test('the export to standard output that docs/moving.md shows writes the archive alone, for import archive', () => {
  const root = path.join(__dirname, '..', '..');
  const docs = readFileSync(path.join(root, 'docs', 'moving.md'), 'utf8');
  const shown = /^(npm run .*export alice) > alice\.json/m.exec(docs)?.[1];
  expect(shown).toBeDefined();
  const file = path.join(dataDir, 'alice.json');
  // As in the image: npm's pre-scripts (the build) skipped, the script itself run by npm.
  const r = spawnSync('/bin/sh', ['-c', `${shown} > ${file}`], {
    cwd: root,
    env: { ...process.env, ...env, npm_config_ignore_scripts: 'true', npm_config_update_notifier: 'false' },
    encoding: 'utf8',
  });
  expect(r.status).toBe(0);
  expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ format: 'castsync-archive', user: 'alice' });
  expect(cli(['import', 'archive', file, 'alice', '--dry-run'], env).status).toBe(0);
}, 60_000);

/**
 * A command run in a terminal (script(1) gives it one): each step's keys typed once its prompt is shown
 * (after what the step before it typed).
 */
function inTerminal(args: string[], steps: [RegExp, string][]) {
  const command = [process.execPath, 'dist/cli/index.js', ...args].map((a) => `'${a}'`).join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], {
    cwd: path.join(__dirname, '..', '..'),
    env: { ...process.env, ...env },
  });
  let shown = '';
  let since = 0;
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    shown += d;
    const [prompt, keys] = steps[0] ?? [];
    if (prompt?.test(shown.slice(since))) {
      steps.shift();
      since = shown.length;
      child.stdin.write(keys!);
    }
  });
  // A prompt that never comes: the command is stopped, its status null.
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  return new Promise<{ status: number | null; shown: string }>((resolve) =>
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, shown });
    }),
  );
}

test('start-over in a terminal: Ctrl-C or Ctrl-D at its question cancels it with status 1', async () => {
  const question = /Type the username to go on: /;
  for (const key of ['\x03', '\x04']) {
    const r = await inTerminal(['user', 'start-over', 'alice'], [[question, key]]);
    expect(r.status).toBe(1);
    expect(r.shown).toMatch(/castsync: Cancelled: nothing was changed/);
  }
  const typed = await inTerminal(['user', 'start-over', 'alice'], [[question, 'alice\r']]);
  expect(typed.status).toBe(0);
  expect(typed.shown).toMatch(/alice starts over: 0 subscription records/);
}, 60_000);

test('user remove in a terminal: another name typed removes nothing; the username typed removes the user', async () => {
  expect(cli(['user', 'add', 'dora', '--password-stdin'], env, 'dora-password\n').status).toBe(0);
  const question = /This removes dora and everything of theirs.*Type the username to go on: /s;
  const wrong = await inTerminal(['user', 'remove', 'dora'], [[question, 'alice\r']]);
  expect(wrong.status).toBe(1);
  expect(wrong.shown).toMatch(/castsync: Not confirmed: nothing was changed/);
  expect(cli(['user', 'list'], env).stdout).toMatch(/^dora\t/m);
  const typed = await inTerminal(['user', 'remove', 'dora'], [[question, 'dora\r']]);
  expect(typed.status).toBe(0);
  expect(typed.shown).toMatch(/User dora removed/);
  expect(cli(['user', 'list'], env).stdout).not.toMatch(/^dora\t/m);
}, 60_000);

test('--password-stdin in a terminal asks for the password without showing it, as without the option', async () => {
  const r = await inTerminal(
    ['user', 'passwd', 'alice', '--password-stdin'],
    [
      [/Password: /, 'typed-unseen\r'],
      [/Repeat password: /, 'typed-unseen\r'],
    ],
  );
  expect(r.status).toBe(0);
  expect(r.shown).toMatch(/Password of alice changed/);
  expect(r.shown).not.toMatch(/typed-unseen/);
}, 60_000);
