import { spawnSync } from 'node:child_process';
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
