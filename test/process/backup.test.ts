import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import pg from 'pg';
import { cli, startCluster, startServer, stopServer, type Cluster } from '../helpers/process';

// `castsync backup FILE` and `castsync restore FILE` with the embedded PostgreSQL, as an operator runs
// them (docs/backups.md): a round trip, and every refusal, before anything is dropped.

const [dir, fromDir, toDir, clusterDir] = ['files', 'from', 'to', 'cluster'].map((n) =>
  mkdtempSync(path.join(tmpdir(), `castsync-backup-${n}-`)),
);
const [from, to] = [{ DATA_DIR: fromDir! }, { DATA_DIR: toDir! }];
const file = path.join(dir!, 'castsync.backup');
let cluster: Cluster | undefined;
afterAll(async () => {
  await cluster?.stop();
  [dir, fromDir, toDir, clusterDir].forEach((d) => rmSync(d!, { recursive: true, force: true }));
});

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

test('restore refuses while a server runs on the database, which it would leave without its job worker', async () => {
  const server = await startServer(to);
  try {
    expect(cli(['user', 'add', 'dave', '--password-stdin'], to, 'dave-password\n').status).toBe(0);
    const refused = cli(['restore', file, '--replace'], to);
    expect(refused).toMatchObject({ status: 1, stdout: '' });
    expect(refused.stderr).toMatch(/^castsync: A castsync server is using the database: stop it first/);
    expect(cli(['user', 'list'], to).stdout).toMatch(/^dave\t/m);
  } finally {
    await stopServer(server);
  }
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

/** Runs SQL on the cluster of DATABASE_URL, as an operator's psql would. */
async function sql(url: string, text: string): Promise<pg.QueryResult> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    return await db.query(text);
  } finally {
    await db.end();
  }
}

const setAsideSchemas = async (url: string) =>
  (await sql(url, "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'castsync_replaced%'")).rows;

/** A backup whole in form whose rows the schema refuses: its user's row twice (one primary key). */
function refusedBackup(): string {
  const lines = zlib.gunzipSync(readFileSync(file)).toString().split('\n');
  const user = lines.findIndex((l) => l.startsWith('{"table":"users",'));
  expect(user).toBeGreaterThan(0);
  lines.splice(user, 0, lines[user]!);
  const refused = path.join(dir!, 'refused.backup');
  writeFileSync(refused, zlib.gzipSync(lines.join('\n')));
  return refused;
}

test('restore --replace that fails after it began (a row the schema refuses) puts back what the database held', async () => {
  cluster = await startCluster(clusterDir!);
  const env = { DATABASE_URL: cluster.url };
  expect(cli(['restore', file], env).status).toBe(0);
  expect(cli(['user', 'add', 'dave', '--password-stdin'], env, 'dave-password\n').status).toBe(0);

  const failed = cli(['restore', refusedBackup(), '--replace'], env);
  expect(failed).toMatchObject({ status: 1, stdout: '' });
  expect(failed.stderr).toMatch(
    /duplicate key value[^\n]*\nThe restore failed; the database holds what it held before\./,
  );
  expect(cli(['user', 'list'], env).stdout).toMatch(/^carol\t[^]*^dave\t/m);
  expect(await setAsideSchemas(cluster.url)).toEqual([]);
  // The job queue came back too: the server's deletion of an account goes through it.
  expect(
    (await sql(cluster.url, "SELECT to_regclass('graphile_worker._private_jobs') IS NOT NULL AS has")).rows,
  ).toEqual([{ has: true }]);

  expect(cli(['restore', file, '--replace'], env).status).toBe(0);
  expect(cli(['user', 'list'], env).stdout).not.toMatch(/^dave/m);
  expect(await setAsideSchemas(cluster.url)).toEqual([]);
});

const interrupted = `BEGIN;
  ALTER SCHEMA public RENAME TO castsync_replaced; ALTER SCHEMA graphile_worker RENAME TO castsync_replaced_queue;
  CREATE SCHEMA public; CREATE TABLE public.users (id int); COMMIT`;

test('after a restore --replace that was interrupted (its process killed), what it set aside is what a failed one puts back', async () => {
  const env = { DATABASE_URL: cluster!.url };
  expect(cli(['user', 'add', 'erin', '--password-stdin'], env, 'erin-password\n').status).toBe(0);
  // The state a restore --replace killed part way leaves: the data set aside, a schema half restored.
  await sql(cluster!.url, interrupted);
  const mixing = cli(['restore', file], env);
  expect(mixing.status).toBe(1);
  expect(mixing.stderr).toMatch(/already holds castsync data.*--replace/);

  expect(cli(['restore', refusedBackup(), '--replace'], env).status).toBe(1);
  expect(cli(['user', 'list'], env).stdout).toMatch(/^erin\t/m);
  expect(await setAsideSchemas(cluster!.url)).toEqual([]);

  // Interrupted again, then a restore --replace that succeeds: the backup's data, nothing left aside.
  await sql(cluster!.url, interrupted);
  expect(cli(['restore', file, '--replace'], env).status).toBe(0);
  expect(cli(['user', 'list'], env).stdout).toMatch(/^carol\t[^\n]*\n$/);
  expect(await setAsideSchemas(cluster!.url)).toEqual([]);
});

test("castsync --version prints the release's version", () => {
  const { version } = JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
    version: string;
  };
  expect(cli(['--version'], from)).toMatchObject({ status: 0, stdout: `${version}\n` });
});
