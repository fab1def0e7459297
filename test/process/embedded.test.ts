import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  allFeedUrls,
  basicAuth,
  call,
  cli,
  deletionOutcome,
  settles,
  startServer,
  stopServer,
  type ServerProcess,
} from '../helpers/process';

// The newcomer's path: no DATABASE_URL, an embedded PostgreSQL in DATA_DIR, users made with the CLI.
const dataDir = mkdtempSync(path.join(tmpdir(), 'castsync-embedded-'));
const env = { DATA_DIR: dataDir };
let server: ServerProcess | undefined;

afterAll(async () => {
  if (server) await stopServer(server);
  rmSync(dataDir, { recursive: true, force: true });
});

const alice = basicAuth('alice', 'alice-password');

describe('embedded PostgreSQL and the CLI', () => {
  test('the CLI works before any server ran, on a fresh DATA_DIR', () => {
    const add = cli(['user', 'add', 'alice', '--password-stdin'], env, 'alice-password\n');
    expect(add).toMatchObject({ status: 0, stdout: 'User alice created\n' });
    const list = cli(['user', 'list'], env);
    expect(list.status).toBe(0);
    expect(list.stdout).toMatch(/^alice\t0 subscriptions/m);
    // The CLI stopped the cluster it started.
    expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
  });

  test('administrators: made with user add --admin or user admin NAME, unmade with --remove', () => {
    // The lines are matched, not the whole output: a warning logged as the CLI's own cluster stops may come too.
    expect(cli(['user', 'add', 'root', '--admin', '--password-stdin'], env, 'root-password\n')).toMatchObject({
      status: 0,
      stdout: expect.stringMatching(/^User root created \(administrator\)$/m),
    });
    expect(cli(['user', 'admin', 'alice'], env)).toMatchObject({
      status: 0,
      stdout: expect.stringMatching(/^alice is an administrator$/m),
    });
    expect(cli(['user', 'list'], env).stdout).toMatch(/^alice\t.*\tadmin$/m);
    expect(cli(['user', 'admin', 'alice', '--remove'], env).stdout).toMatch(/^alice is no longer an administrator$/m);
    const list = cli(['user', 'list'], env).stdout;
    expect(list).toMatch(/^alice\t[^\n]*Z$/m);
    expect(list).toMatch(/^root\t.*\tadmin$/m);
    expect(cli(['user', 'admin', 'nobody'], env)).toMatchObject({
      status: 1,
      stderr: expect.stringMatching(/No user nobody/),
    });
    expect(cli(['user', 'remove', 'root', '--yes'], env).status).toBe(0);
  });

  test('the CLI refuses bad input with a message and exit status 1', () => {
    for (const [args, input, message] of [
      [['user', 'add', 'alice', '--password-stdin'], 'another-password\n', /already exists/],
      [['user', 'add', 'bad name!', '--password-stdin'], 'long-enough-pw\n', /Usernames are/],
      [['user', 'add', 'shorty', '--password-stdin'], 'short\n', /at least 8/],
      [['user', 'passwd', 'nobody', '--password-stdin'], 'long-enough-pw\n', /No user nobody/],
      [['token', 'revoke', 'x'], '', /number/],
    ] as const) {
      const r = cli([...args], env, input);
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(message);
    }
  });

  test('the server starts on that DATA_DIR and the CLI user can sign in', async () => {
    server = await startServer(env);
    const r = await call(server.origin, 'POST', '/v1/subscriptions', alice, {
      subscriptions: [{ feed_url: 'https://embedded.example/a.xml' }],
    });
    expect(r.status).toBe(200);
  });

  test('the CLI works while the server runs, through the same cluster', async () => {
    const s = server!;
    expect(cli(['user', 'add', 'bob', '--password-stdin'], env, 'bob-password\n').status).toBe(0);
    expect((await call(s.origin, 'GET', '/v1/subscriptions', basicAuth('bob', 'bob-password'))).status).toBe(200);
    const created = cli(['token', 'create', 'bob', '--label', 'phone'], env);
    expect(created.status).toBe(0);
    const token = created.stdout.trim();
    const id = /Token (\d+)/.exec(created.stderr)?.[1];
    expect((await call(s.origin, 'GET', '/v1/subscriptions', `Bearer ${token}`)).status).toBe(200);
    // The CLI's change reaches the server by NOTIFY, a moment after the command ends.
    expect(cli(['token', 'revoke', id!], env).status).toBe(0);
    const withToken = async () => (await call(s.origin, 'GET', '/v1/subscriptions', `Bearer ${token}`)).status;
    expect(await settles(withToken, 401)).toBe(401);
    expect(cli(['user', 'passwd', 'bob', '--password-stdin'], env, 'bob-new-password\n').status).toBe(0);
    const withOldPassword = async () =>
      (await call(s.origin, 'GET', '/v1/subscriptions', basicAuth('bob', 'bob-password'))).status;
    expect(await settles(withOldPassword, 401)).toBe(401);
    expect((await call(s.origin, 'GET', '/v1/subscriptions', basicAuth('bob', 'bob-new-password'))).status).toBe(200);
    // Without a terminal to confirm on, a removal needs --yes, and without it removes nothing.
    expect(cli(['user', 'remove', 'bob'], env)).toMatchObject({
      status: 1,
      stderr: expect.stringMatching(/Give --yes/),
    });
    expect((await call(s.origin, 'GET', '/v1/subscriptions', basicAuth('bob', 'bob-new-password'))).status).toBe(200);
    expect(cli(['user', 'remove', 'bob', '--yes'], env).status).toBe(0);
    const withNewPassword = async () =>
      (await call(s.origin, 'GET', '/v1/subscriptions', basicAuth('bob', 'bob-new-password'))).status;
    expect(await settles(withNewPassword, 401)).toBe(401);
    expect(cli(['migrate'], env)).toMatchObject({ status: 0, stdout: 'Database schema is up to date\n' });
  });

  test('start-over forgets the list and plays, after --yes only (no terminal to confirm on)', async () => {
    const s = server!;
    expect(cli(['user', 'add', 'carol', '--password-stdin'], env, 'carol-password\n').status).toBe(0);
    const carol = basicAuth('carol', 'carol-password');
    await call(s.origin, 'POST', '/v1/subscriptions', carol, {
      subscriptions: [{ feed_url: 'https://embedded.example/reset.xml' }],
    });
    const unconfirmed = cli(['user', 'start-over', 'carol'], env);
    expect(unconfirmed.status).toBe(1);
    expect(unconfirmed.stderr).toMatch(/Give --yes/);
    expect((await call(s.origin, 'GET', '/v1/subscriptions', carol)).body.total).toBe(1);
    const done = cli(['user', 'start-over', 'carol', '--yes'], env);
    expect(done).toMatchObject({
      status: 0,
      stdout: 'carol starts over: 1 subscription records and 0 episode actions forgotten\n',
    });
    expect((await call(s.origin, 'GET', '/v1/subscriptions', carol)).body.total).toBe(0);
    expect(cli(['user', 'remove', 'carol', '--yes'], env).status).toBe(0);
  });

  test('SIGTERM stops the server and its PostgreSQL cleanly within 10 s; data survives a restart', async () => {
    const { code, ms } = await stopServer(server!);
    server = undefined;
    expect(code).toBe(0);
    // Exit 0 means the server finished before its own SHUTDOWN_TIMEOUT (10 s); the margin is for a busy machine.
    expect(ms).toBeLessThan(10_000 + 3000);
    expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
    server = await startServer(env);
    const r = await call(server.origin, 'GET', '/v1/subscriptions', alice);
    expect(r.body.subscriptions.map((s: { feed_url: string }) => s.feed_url)).toEqual([
      'https://embedded.example/a.xml',
    ]);
  });

  test('after kill -9 of the whole process group, the next start needs no cleanup and keeps acknowledged writes', async () => {
    const s = server!;
    const acknowledged: string[] = [];
    let stop = false;
    let attempted = 0;
    const writer = (async () => {
      for (let i = 0; !stop; i++) {
        const url = `https://crash.example/${i}.xml`;
        attempted++;
        try {
          const r = await call(s.origin, 'POST', '/v1/subscriptions', alice, { subscriptions: [{ feed_url: url }] });
          if (r.status === 200) acknowledged.push(url);
        } catch {
          return; // the connection died with the server
        }
      }
    })();
    await new Promise((r) => setTimeout(r, 1500));
    s.kill('SIGKILL');
    await s.exited;
    stop = true;
    await writer;
    server = undefined;
    expect(acknowledged.length).toBeGreaterThan(5);
    const lock = path.join(dataDir, 'pg', 'postmaster.pid');
    // The crash left PostgreSQL's lock file behind.
    expect(existsSync(lock)).toBe(true);
    server = await startServer(env);
    const stored = await allFeedUrls(server.origin, alice);
    const lost = acknowledged.filter((u) => !stored.has(u));
    process.stderr.write(
      `reliability: kill -9 during POSTs: attempted ${attempted}, acknowledged ${acknowledged.length}, lost ${lost.length}\n`,
    );
    expect(lost).toEqual([]);
  });

  test('a deletion accepted before a crash completes after the restart', async () => {
    await stopServer(server!);
    server = await startServer({ ...env, WORKER: 'false' });
    const list = await call(server.origin, 'GET', '/v1/subscriptions', alice);
    const guid = list.body.subscriptions[0].guid;
    const d = await call(server.origin, 'DELETE', `/v1/subscriptions/${guid}`, alice);
    expect(d.status).toBe(202);
    expect((await call(server.origin, 'GET', `/v1/deletions/${d.body.deletion_id}`, alice)).body.status).toBe(
      'PENDING',
    );
    server.kill('SIGKILL');
    await server.exited;
    server = await startServer(env);
    expect(await deletionOutcome(server.origin, alice, d.body.deletion_id)).toBe('SUCCESS');
    expect((await call(server.origin, 'GET', `/v1/subscriptions/${guid}`, alice)).status).toBe(410);
  });

  test('an invalid setting stops the start with a message naming the variable', async () => {
    await expect(startServer({ ...env, PORT: 'eighty' }, 20_000)).rejects.toThrow(/Invalid PORT/);
  });
});
