import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { cli } from '../helpers/process';

// `castsync backup FILE` and `castsync restore FILE` with the embedded PostgreSQL, as an operator runs
// them (docs/backups.md): a round trip, and every refusal, before anything is dropped.

const [dir, fromDir, toDir] = ['files', 'from', 'to'].map((n) =>
  mkdtempSync(path.join(tmpdir(), `castsync-backup-${n}-`)),
);
const [from, to] = [{ DATA_DIR: fromDir! }, { DATA_DIR: toDir! }];
const file = path.join(dir!, 'castsync.backup');
afterAll(() => [dir, fromDir, toDir].forEach((d) => rmSync(d!, { recursive: true, force: true })));

const line = (out: { stdout: string }, re: RegExp) => out.stdout.split('\n').find((l) => re.test(l));

test('a backup of one embedded database restores into another, and then refuses to mix histories', () => {
  expect(cli(['user', 'add', 'carol', '--password-stdin'], from, 'carol-password\n').status).toBe(0);
  const written = cli(['backup', file], from);
  expect(written.status).toBe(0);
  expect(line(written, /^Backup written/)).toMatch(
    /^Backup written to .*castsync\.backup: \d+ tables, 1 rows, schema \d+_/,
  );
  // It holds password hashes: its owner's only, whatever the umask lets a new file be.
  expect(statSync(file).mode & 0o777).toBe(0o600);

  const restored = cli(['restore', file], to);
  expect(restored.status).toBe(0);
  expect(line(restored, /^Restored/)).toMatch(/^Restored 1 rows from .* \(castsync \d+\.\d+\.\d+, /);
  expect(cli(['user', 'list'], to).stdout).toMatch(/^carol\t0 subscriptions/m);
  // The password came across: the restored user can be told apart from a new one.
  expect(cli(['user', 'add', 'carol', '--password-stdin'], to, 'other-password\n').status).toBe(1);

  const again = cli(['restore', file], to);
  expect(again).toMatchObject({ status: 1, stdout: '' });
  expect(again.stderr).toMatch(/already holds castsync data.*--replace/);
  expect(cli(['user', 'add', 'dave', '--password-stdin'], to, 'dave-password\n').status).toBe(0);
  expect(cli(['restore', file, '--replace'], to).status).toBe(0);
  expect(cli(['user', 'list'], to).stdout).not.toMatch(/^dave/m);
});

test('a file that is not a backup, or one of a newer release, is refused with nothing changed', () => {
  const junk = path.join(dir!, 'junk.backup');
  writeFileSync(junk, 'hello\n');
  const notBackup = cli(['restore', junk, '--replace'], to);
  expect(notBackup.status).toBe(1);
  expect(notBackup.stderr).toMatch(/is not a castsync backup/);

  const lines = zlib.gunzipSync(readFileSync(file)).toString().split('\n');
  const header = JSON.parse(lines[0]!) as { migration: string };
  lines[0] = JSON.stringify({ ...header, migration: '1999999999999_from-the-future', version: '99.0.0' });
  const newer = path.join(dir!, 'newer.backup');
  writeFileSync(newer, lines.join('\n'));
  const refused = cli(['restore', newer, '--replace'], to);
  expect(refused.status).toBe(1);
  expect(refused.stderr).toMatch(/castsync 99\.0\.0, newer than this one/);
  expect(cli(['user', 'list'], to).stdout).toMatch(/^carol\t/m);
});

test('a backup cut short, or damaged in a line after its header, is refused with nothing dropped', () => {
  const bytes = readFileSync(file);
  const cut = path.join(dir!, 'cut.backup');
  writeFileSync(cut, bytes.subarray(0, bytes.length - 20));
  const lines = zlib.gunzipSync(bytes).toString().split('\n');
  lines.splice(lines.length - 2, 0, 'not a row');
  const damaged = path.join(dir!, 'damaged.backup');
  writeFileSync(damaged, zlib.gzipSync(lines.join('\n')));

  for (const [bad, reason] of [
    [damaged, /is not a castsync backup \(a line is not a row\)/],
    [cut, /is not a castsync backup \(it is cut short or damaged: unexpected end of file\)/],
  ] as const) {
    const refused = cli(['restore', bad, '--replace'], to);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(reason);
    expect(cli(['user', 'list'], to).stdout).toMatch(/^carol\t/m);
  }
});

test("castsync --version prints the release's version", () => {
  const { version } = JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
    version: string;
  };
  expect(cli(['--version'], from)).toMatchObject({ status: 0, stdout: `${version}\n` });
});
