import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freshDatabase } from '../helpers/db';
import { listenerGroups, onFreePort, PortTaken } from '../helpers/process';

// The container image, without a Docker engine: the runtime stage of the Dockerfile is read, what it
// copies is laid out in an empty directory as the image would hold it, and its CMD is started there with
// its ENV, as a non-root user would run it. Then the HEALTHCHECK's command must pass, and SIGTERM to
// that one process (what `docker stop` sends) must end it cleanly. Nothing may be written beside the app.

const root = path.join(__dirname, '..', '..');
const dockerfile = fs.readFileSync(path.join(root, 'Dockerfile'), 'utf8').replace(/\\\n\s*/g, ' ');
const runtime = dockerfile
  .split(/^FROM /m)
  .at(-1)!
  .split('\n');
const instruction = (name: string) =>
  runtime.filter((l) => l.startsWith(`${name} `)).map((l) => l.slice(name.length + 1));

const workdir = instruction('WORKDIR').at(-1)!;
const env = Object.fromEntries(
  instruction('ENV').flatMap((l) => [...l.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!] as const)),
);
const cmd = JSON.parse(instruction('CMD').at(-1)!) as string[];
const healthcheck = instruction('HEALTHCHECK').at(-1)!;

test('the runtime stage runs as a non-root user, with a health check, Node as its one process', () => {
  expect(instruction('USER').at(-1)).toBe('node');
  expect(healthcheck).toMatch(/CMD node -e .*\/readyz/);
  expect(cmd[0]).toBe('node');
  expect(cmd).toContain('dist/server.js');
});

test('its CMD starts the server from what the image holds, passes the health check and stops on SIGTERM', async () => {
  const image = fs.mkdtempSync(path.join(os.tmpdir(), 'castsync-image-'));
  for (const copy of instruction('COPY')) {
    const parts = copy.split(/\s+/).filter((p) => !p.startsWith('--'));
    const dest = path.join(image, path.relative(workdir, path.resolve(workdir, parts.pop()!)));
    for (const source of parts) {
      // The build stage's /app is this checkout, built (npm test builds first).
      const from = path.join(root, copy.includes('--from=build') ? path.relative('/app', source) : source);
      const to = parts.length > 1 || dest.endsWith('/') ? path.join(dest, path.basename(source)) : dest;
      fs.mkdirSync(path.dirname(to), { recursive: true });
      if (path.basename(source) === 'node_modules') fs.symlinkSync(from, to);
      else fs.cpSync(from, to, { recursive: true });
    }
  }
  const before = fs.readdirSync(image, { recursive: true }).sort();
  const database = await freshDatabase();
  let server: ChildProcess | undefined;
  try {
    // Started as the image starts it, on a free port; on another if a process takes that one first.
    const run = await onFreePort(async (port) => {
      const runEnv = {
        PATH: process.env.PATH!,
        ...env,
        HOST: '127.0.0.1',
        PORT: String(port),
        DATABASE_URL: database.url,
      };
      // In a process group of its own, to tell its socket from another process's (listenerGroups).
      server = spawn(cmd[0] === 'node' ? process.execPath : cmd[0]!, cmd.slice(1), {
        cwd: image,
        env: runEnv,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let log = '';
      server.stdout!.on('data', (d) => (log += d));
      server.stderr!.on('data', (d) => (log += d));
      let done = false;
      const exited = new Promise<number | null>((resolve) => server!.on('exit', (code) => resolve(code)));
      void exited.then(() => (done = true));
      for (let i = 0; ; i++) {
        if (done) {
          const Failure = /EADDRINUSE/.test(log) ? PortTaken : Error;
          throw new Failure(`exited during start:\n${log}`);
        }
        const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
          (r) => r.ok,
          () => false,
        );
        if (ready && listenerGroups(port).has(server.pid!)) break;
        if (ready) {
          server.kill('SIGKILL');
          await exited;
          throw new PortTaken(`port ${port} is another process's`);
        }
        if (i > 300) throw new Error(`not ready:\n${log}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      return { runEnv, exited };
    });
    const check = spawnSync(process.execPath, ['-e', /node -e "(.*)"$/.exec(healthcheck)![1]!], { env: run.runEnv });
    expect(check.status).toBe(0);
    server!.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    expect(fs.readdirSync(image, { recursive: true }).sort()).toEqual(before);
  } finally {
    server?.kill('SIGKILL');
    await database.drop();
    fs.rmSync(image, { recursive: true, force: true });
  }
});
