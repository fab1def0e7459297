import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { basicAuth, call, cli, startServer, underLoad, type ServerProcess } from '../helpers/process';

// As people run it: `npm start` in a process group of its own, with the embedded PostgreSQL, and signals
// sent to the whole group (Ctrl-C in a terminal, systemd's KillMode=control-group, docker stop of an npm
// PID 1). npm forwards its own copy, so node gets the signal more than once.

const auth = basicAuth('pat', 'pat-password');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The postmaster of DATA_DIR, if one is alive. */
function postmasterAlive(dataDir: string): boolean {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return false;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    return false;
  }
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(100)) if (check()) return true;
  return check();
}

let dataDir: string;
beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'castsync-signals-'));
  expect(cli(['user', 'add', 'pat', '--password-stdin'], { DATA_DIR: dataDir }, 'pat-password\n').status).toBe(0);
});
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

describe.each(['SIGTERM', 'SIGINT'] as const)('%s to the process group of npm start', (signal) => {
  test('under load: no reset, no 5xx, exit 0 within 10 s, PostgreSQL stopped, and a clean next start', async () => {
    const server: ServerProcess = await startServer({ DATA_DIR: dataDir }, 90_000, { npm: true });
    let exit!: Awaited<ServerProcess['exited']>;
    let t0 = 0;
    const outcomes = await underLoad(server.origin, auth, `group-${signal}`, async () => {
      t0 = Date.now();
      server.kill(signal);
      exit = await server.exited;
    });
    const acknowledged = outcomes.acknowledged;
    process.stderr.write(
      `reliability: ${signal} to npm start's group under load: completed ${outcomes.ok}, refused ${outcomes.refused}, ` +
        `failed ${outcomes.failed.length}, exit ${exit.code} after ${exit.at - t0} ms\n`,
    );
    expect(outcomes.failed).toEqual([]);
    expect(outcomes.ok).toBeGreaterThan(50);
    expect(exit.code).toBe(0);
    // Exit 0 means the server finished before its own SHUTDOWN_TIMEOUT (10 s); the margin is for a busy machine.
    expect(exit.at - t0).toBeLessThan(10_000 + 3000);
    expect(server.log()).not.toMatch(/exiting at once/);
    expect(postmasterAlive(dataDir)).toBe(false);

    const again = await startServer({ DATA_DIR: dataDir }, 90_000, { npm: true });
    try {
      expect(again.log()).not.toMatch(/orphan/);
      const listed = await call(again.origin, 'GET', '/v1/subscriptions?per_page=500', auth);
      const urls = new Set((listed.body.subscriptions as { feed_url: string }[]).map((s) => s.feed_url));
      expect(acknowledged.filter((u) => !urls.has(u))).toEqual([]);
    } finally {
      again.kill('SIGTERM');
      expect((await again.exited).code).toBe(0);
    }
  });
});

test('kill -9 of the whole group leaves no PostgreSQL behind', async () => {
  const server = await startServer({ DATA_DIR: dataDir }, 90_000, { npm: true });
  expect(postmasterAlive(dataDir)).toBe(true);
  server.kill('SIGKILL');
  await server.exited;
  expect(await until(() => !postmasterAlive(dataDir), 10_000)).toBe(true);
});
