import { readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import path from 'node:path';
import { as, testApp, type TestApp, type TestUser } from '../helpers/app';
import { feedServer } from '../helpers/feed-server';
import { cliAsync } from '../helpers/process';
import { signedInAgent } from '../helpers/web';
import { tempDirForFile } from '../helpers/tmp';

// The import and export commands as scripts run them: exit status, summary, no stack trace.

let remote: TestApp;
let local: TestApp;
let server: http.Server;
let remoteUrl: string;
let env: Record<string, string>;
const dir = tempDirForFile('castsync-moving-');

beforeAll(async () => {
  [remote, local] = await Promise.all([testApp(), testApp()]);
  server = http.createServer(remote.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  remoteUrl = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  env = { DATABASE_URL: local.url, LOG_LEVEL: 'warn' };
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await Promise.all([remote.close(), local.close()]);
});

async function remoteUser(): Promise<TestUser> {
  const u = await remote.user('cliremote');
  const api = as(remote, u);
  await api.post(`/api/2/subscriptions/${u.name}/phone.json`, {
    add: ['https://a.example/f', 'https://b.example/f'],
    remove: [],
  });
  await api.post(`/api/2/episodes/${u.name}.json`, [
    {
      podcast: 'https://a.example/f',
      episode: 'https://a.example/1.mp3',
      action: 'play',
      position: 5,
      timestamp: '2022-02-02T02:02:02',
    },
    {
      podcast: 'https://a.example/f',
      episode: 'https://a.example/2.mp3',
      action: 'new',
      timestamp: '2022-02-02T02:02:03',
    },
  ]);
  return u;
}

const count = async (table: string, userId: number) =>
  Number((await local.db.query(`SELECT count(*) AS n FROM ${table} WHERE user_id = $1`, [userId])).rows[0].n);

test('import gpodder: --dry-run changes nothing, the import prints its summary, a second run adds nothing (exit 0)', async () => {
  const r = await remoteUser();
  const u = await local.user('cli');
  const args = ['import', 'gpodder', remoteUrl, u.name, '--remote-user', r.name, '--password-stdin'];
  const dry = await cliAsync([...args, '--dry-run'], env, `${r.password}\n`);
  expect(dry).toMatchObject({ status: 0, stderr: '' });
  expect(dry.stdout).toBe(
    `Dry run: nothing was changed. ${r.name} at ${remoteUrl} into ${u.name} would bring:\n` +
      '  devices: 1 new of 1: phone (phone, other)\n' +
      '  feeds: 2 new of 2: https://a.example/f, https://b.example/f\n' +
      '  actions: 2 new of 2: play https://a.example/1.mp3 at 2022-02-02T02:02:02.000Z (position 5 s), new https://a.example/2.mp3 at 2022-02-02T02:02:03.000Z\n',
  );
  expect(await count('subscriptions', u.id)).toBe(0);

  const real = await cliAsync(args, env, `${r.password}\n`);
  expect(real).toMatchObject({ status: 0, stderr: '' });
  expect(real.stdout).toContain(`Imported ${r.name} at ${remoteUrl} into ${u.name}:\n`);
  expect(real.stdout).toContain('  feeds: 2 new of 2');
  expect(await count('subscriptions', u.id)).toBe(2);
  expect(await count('episode_actions', u.id)).toBe(2);

  const again = await cliAsync(args, env, `${r.password}\n`);
  expect(again.status).toBe(0);
  expect(again.stdout).toContain('  feeds: 0 new of 2\n');
  expect(again.stdout).toContain('  actions: 0 new of 2\n');
});

test('a wrong password, or an unknown local user: exit 1 with the reason, no stack trace, nothing imported', async () => {
  const r = await remoteUser();
  const u = await local.user('cliwrong');
  const wrong = await cliAsync(
    ['import', 'nextcloud', remoteUrl, u.name, '--remote-user', r.name, '--password-stdin'],
    env,
    'nope\n',
  );
  expect(wrong).toEqual({
    status: 1,
    stdout: '',
    stderr: `castsync: ${remoteUrl} refused the name ${r.name} and its password (HTTP 401)\n`,
  });
  expect(await count('subscriptions', u.id)).toBe(0);
  const nobody = await cliAsync(
    ['import', 'gpodder', remoteUrl, 'nobody', '--remote-user', r.name, '--password-stdin'],
    env,
    'x\n',
  );
  expect(nobody).toMatchObject({ status: 1, stderr: 'castsync: No user nobody\n' });
});

test('an action the rules refuse: imported all else, listed with its reason, exit 2', async () => {
  const refusing = http.createServer((req, res) => {
    const json = (body: unknown) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.url === '/index.php/apps/gpoddersync/subscriptions?since=0')
      return json({ add: ['https://ok.example/f'], remove: [] });
    json({
      actions: [
        {
          podcast: 'https://ok.example/f',
          episode: 'https://ok.example/e',
          action: 'PLAY',
          position: -1,
          timestamp: '2021-01-01T00:00:00+00:00',
        },
      ],
    });
  });
  await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
  try {
    const u = await local.user('clirefused');
    const url = `http://127.0.0.1:${(refusing.address() as net.AddressInfo).port}`;
    const r = await cliAsync(['import', 'nextcloud', url, u.name, '--remote-user', 'x', '--password-stdin'], env, 'y');
    expect(r.status).toBe(2);
    expect(r.stdout).toContain(
      "  1 refused by castsync's rules:\n    actions: action 0: position: seconds, at least 0, required for play\n",
    );
    expect(await count('subscriptions', u.id)).toBe(1);
  } finally {
    await new Promise<void>((resolve) => refusing.close(() => resolve()));
  }
});

test('export --output writes the archive for its owner only; import archive restores it (dry run first)', async () => {
  const r = await remoteUser();
  const source = await local.user('cliexport');
  await cliAsync(
    ['import', 'gpodder', remoteUrl, source.name, '--remote-user', r.name, '--password-stdin'],
    env,
    r.password,
  );
  const file = path.join(dir, 'archive.json');
  const exported = await cliAsync(['export', source.name, '--output', file], env);
  expect(exported).toEqual({
    status: 0,
    stdout: '',
    stderr: `Archive of ${source.name} written to ${file}: 2 subscription records, 2 episode actions, 1 devices\n`,
  });
  expect(statSync(file).mode & 0o777).toBe(0o600);
  const archive = JSON.parse(readFileSync(file, 'utf8'));
  expect(archive).toMatchObject({ format: 'castsync-archive', version: 1, user: source.name });
  const toStdout = await cliAsync(['export', source.name], env);
  expect({ ...JSON.parse(toStdout.stdout), exported_at: '' }).toEqual({ ...archive, exported_at: '' });
  // What the command logs goes to standard error: `castsync export NAME > FILE` stays an archive.
  const logged = await cliAsync(['export', source.name], { ...env, LOG_LEVEL: 'debug' });
  expect(logged.stderr).toMatch(/^\{"level":20,/m);
  expect({ ...JSON.parse(logged.stdout), exported_at: '' }).toEqual({ ...archive, exported_at: '' });

  const u = await local.user('clirestore');
  const dry = await cliAsync(['import', 'archive', file, u.name, '--dry-run'], env);
  expect(dry.status).toBe(0);
  expect(dry.stdout).toContain('  feeds: 2 new of 2');
  expect(await count('subscriptions', u.id)).toBe(0);
  expect((await cliAsync(['import', 'archive', file, u.name], env)).status).toBe(0);
  const view = async (x: TestUser) =>
    (
      (await as(local, x).get('/v1/subscriptions')).body.subscriptions as {
        feed_url: string;
        guid: string;
        is_subscribed: boolean;
      }[]
    ).map((s) => [s.feed_url, s.guid, s.is_subscribed]);
  expect(await view(u)).toEqual(await view(source));

  const missing = await cliAsync(['import', 'archive', path.join(dir, 'none.json'), u.name], env);
  expect(missing).toMatchObject({
    status: 1,
    stderr: `castsync: Cannot read ${path.join(dir, 'none.json')}: ENOENT\n`,
  });
});

test('one import at a time: the command is refused while the web page has one queued, and the web page while the command runs', async () => {
  const r = await remoteUser();
  const u = await local.user('cliturn');
  const { agent, csrf } = await signedInAgent(local.app, u.name, u.password);
  const form = { _csrf: csrf, source: 'gpodder', server_url: remoteUrl, remote_user: r.name, password: r.password };
  const fromPage = () =>
    agent
      .post('/web/import')
      .type('form')
      .send({ ...form, action: 'import' });
  const refusal =
    'Another import into this account is queued or running: one at a time, so start this one when it is done.';
  const command = (url: string) =>
    cliAsync(['import', 'gpodder', url, u.name, '--remote-user', r.name, '--password-stdin'], env, r.password);

  expect((await fromPage()).status).toBe(303);
  expect(await command(remoteUrl)).toEqual({ status: 1, stdout: '', stderr: `castsync: ${refusal}\n` });
  await local.db.query(`UPDATE imports SET state = 'failed', secret = NULL WHERE user_id = $1`, [u.id]);

  // The command's import, held at its first request: the web page refuses another meanwhile.
  let reached!: () => void;
  const waiting = new Promise<void>((resolve) => (reached = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const held = await feedServer({
    '*': (_q, s) => {
      reached();
      void released.then(() => s.writeHead(503).end());
    },
  });
  try {
    const running = command(held.url(''));
    await waiting;
    const refused = await fromPage();
    expect(refused.status).toBe(400);
    expect(refused.text).toContain(refusal);
    release();
    expect(await running).toMatchObject({ status: 1, stderr: expect.stringContaining('answered HTTP 503') });
  } finally {
    release();
    await held.close();
  }
  expect((await fromPage()).status).toBe(303);
});
