import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { freePort } from '../../src/db/embedded';

export { freePort };

const root = path.join(__dirname, '..', '..');

export type ServerProcess = {
  origin: string;
  child: ChildProcess;
  log: () => string;
  /** Resolves with the exit code (or signal) and how long the exit took. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  /** Signals the whole process group (the server and an embedded PostgreSQL). */
  kill: (signal: NodeJS.Signals) => void;
};

const baseEnv = (extra: Record<string, string>) => ({
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '/root',
  LOG_LEVEL: 'warn',
  ...extra,
});

/**
 * The environment and node arguments of `npm start` ("exec env VAR=x node --flags dist/server.js"), so
 * that tests run what users run.
 */
const startCommand = (): { env: Record<string, string>; args: string[] } => {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const words = pkg.scripts.start.split(/\s+/).filter((w) => w !== 'exec' && w !== 'env');
  const env = Object.fromEntries(words.filter((w) => /^[A-Z_]+=/.test(w)).map((w) => w.split('=') as [string, string]));
  return { env, args: words.slice(words.indexOf('node') + 1) };
};

// Whatever happens to a test, no server it started outlives the test process.
const started = new Set<number>();
process.on('exit', () => {
  for (const pid of started) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
});

/**
 * The process groups of the processes listening on 127.0.0.1:port (from /proc: the socket's inode in
 * /proc/net/tcp, then the processes holding that socket), so that a test knows whose server answers.
 */
export function listenerGroups(port: number): Set<number> {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // local_address is ADDR:PORT in hex, st 0A is LISTEN, the inode is the tenth field.
      if (f[1]?.endsWith(`:${hexPort}`) && f[3] === '0A') inodes.add(f[9]!);
    }
  }
  const groups = new Set<number>();
  if (inodes.size === 0) return groups;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    const holds = fds.some((fd) => {
      try {
        return inodes.has(/^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1] ?? '');
      } catch {
        return false;
      }
    });
    if (!holds) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // "pid (comm) state ppid pgrp ...": the group is the third field after the command's parenthesis.
      groups.add(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]));
    } catch {
      /* gone */
    }
  }
  return groups;
}

/**
 * Starts the built server in its own process group: as `npm start` runs it, without the build step; with
 * `npm`, through npm itself (`npm start`, its pre-script skipped), so that the group holds npm and node,
 * as when a person or a service manager starts it.
 *
 * The server is ready when /healthz answers from a socket its own group listens on. A free port is free
 * only when it is picked: a server of a test running beside this one may take it before this server
 * listens (and answer its /healthz); then, unless the port was chosen, the start is tried on another one.
 */
export async function startServer(
  env: Record<string, string>,
  timeoutMs = 90_000,
  {
    npm = false,
    port: chosen,
    pickPort = freePort,
  }: { npm?: boolean; port?: number; /** for the helper's own test */ pickPort?: () => Promise<number> } = {},
): Promise<ServerProcess> {
  if (chosen !== undefined) return startServerOn(chosen, env, timeoutMs, npm);
  return onFreePort((port) => startServerOn(port, env, timeoutMs, npm), pickPort);
}

/** A start that failed because another process had taken its port. */
export class PortTaken extends Error {}

/**
 * Runs `start` on a free port; if another process takes the port first (`start` throws PortTaken), again
 * on another one, three tries in all.
 */
export async function onFreePort<T>(start: (port: number) => Promise<T>, pickPort = freePort): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start(await pickPort());
    } catch (e) {
      if (!(e instanceof PortTaken) || attempt === 3) throw e;
    }
  }
}

async function startServerOn(port: number, env: Record<string, string>, timeoutMs: number, npm: boolean) {
  const start = startCommand();
  const [command, args] = npm ? ['npm', ['start', '--ignore-scripts', '--silent']] : [process.execPath, start.args];
  const child = spawn(command, args, {
    cwd: root,
    env: baseEnv({ ...(npm ? {} : start.env), HOST: '127.0.0.1', PORT: String(port), ...env }),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.add(child.pid!);
  child.on('exit', () => started.delete(child.pid!));
  let log = '';
  child.stdout!.on('data', (d) => (log = (log + d).slice(-50_000)));
  child.stderr!.on('data', (d) => (log = (log + d).slice(-50_000)));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, at: Date.now() })),
  );
  let done = false;
  void exited.then(() => (done = true));
  const origin = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (done) {
      await new Promise((r) => setImmediate(r)); // the last of its output
      if (/EADDRINUSE|Address already in use/.test(log)) throw new PortTaken(`port ${port} was taken:\n${log}`);
      throw new Error(`server exited during start:\n${log}`);
    }
    let answered = false;
    try {
      answered = (await fetch(`${origin}/healthz`)).status === 200;
    } catch {
      /* not listening yet */
    }
    if (answered) {
      // This server, or a process that took the port before it could listen.
      if (listenerGroups(port).has(child.pid!)) break;
      process.kill(-child.pid!, 'SIGKILL');
      await exited;
      throw new PortTaken(`port ${port} is another process's`);
    }
    if (Date.now() > deadline) {
      process.kill(-child.pid!, 'SIGKILL');
      throw new Error(`server did not start:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    origin,
    child,
    log: () => log,
    exited,
    kill: (signal: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        /* already gone */
      }
    },
  };
}

/** Stops a server with SIGTERM, SIGKILL-ing the group if it does not exit in time. */
export async function stopServer(s: ServerProcess, timeoutMs = 15_000): Promise<{ code: number | null; ms: number }> {
  const t0 = Date.now();
  s.kill('SIGTERM');
  const timer = setTimeout(() => s.kill('SIGKILL'), timeoutMs);
  const { code, at } = await s.exited;
  clearTimeout(timer);
  return { code, ms: at - t0 };
}

const cliOptions = (env: Record<string, string>) => ({
  cwd: root,
  env: baseEnv(env),
  encoding: 'utf8' as const,
  timeout: 90_000,
});

export function cli(args: string[], env: Record<string, string>, input?: string) {
  const r = spawnSync(process.execPath, ['dist/cli/index.js', ...args], { ...cliOptions(env), input });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** cli() without blocking, so that several may run at once (and a server of the test process can answer it). */
export function cliAsync(args: string[], env: Record<string, string>, input?: string) {
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(process.execPath, ['dist/cli/index.js', ...args], cliOptions(env), (err, stdout, stderr) => {
      const status = err ? (typeof err.code === 'number' ? err.code : null) : 0;
      resolve({ status, stdout, stderr });
    });
    child.stdin?.end(input ?? '');
  });
}

/**
 * cliAsync(), watched as it runs: `printed(re)` resolves once a line of its standard output matches (so
 * that a test can do something while the command is part way), `done` with what cliAsync() resolves with.
 */
export function cliWatched(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, ['dist/cli/index.js', ...args], { ...cliOptions(env), stdio: 'pipe' });
  child.stdin.end();
  let [stdout, stderr] = ['', ''];
  const waiting: { re: RegExp; resolve: () => void }[] = [];
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
    for (const w of waiting.filter((x) => x.re.test(stdout))) w.resolve();
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const done = new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (status) => resolve({ status, stdout, stderr })),
  );
  const printed = (re: RegExp) =>
    new Promise<void>((resolve, reject) => {
      if (re.test(stdout)) return resolve();
      waiting.push({ re, resolve });
      void done.then((r) => reject(new Error(`the command ended without printing ${re}:\n${r.stdout}${r.stderr}`)));
    });
  return { printed, done };
}

export const basicAuth = (user: string, password: string) =>
  'Basic ' + Buffer.from(`${user}:${password}`).toString('base64');

/**
 * The status fn() settles on within 5 s: a change another process announces with NOTIFY (the CLI's, another
 * instance's) takes a moment to reach a server. Returns as soon as fn() gives `want`.
 */
export async function settles(fn: () => Promise<number>, want: number): Promise<number> {
  let status = await fn();
  for (let i = 0; i < 100 && status !== want; i++) {
    await new Promise((r) => setTimeout(r, 50));
    status = await fn();
  }
  return status;
}

export async function call(origin: string, method: string, path: string, authorization?: string, body?: unknown) {
  const r = await fetch(origin + path, {
    method,
    headers: {
      ...(authorization && { authorization }),
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, headers: r.headers, body: text ? JSON.parse(text) : undefined };
}

export type Cluster = { url: string; port: number; stop: () => Promise<void> };

/**
 * Runs one of the test/helpers scripts that print "ready VALUE" once they serve: the value, and how to
 * stop the script (SIGTERM, then its exit).
 */
async function startHelper(
  script: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ ready: string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [`test/helpers/${script}`, ...args], {
    cwd: root,
    env: baseEnv(env),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.add(child.pid!);
  const exited = new Promise((r) => child.on('exit', r));
  void exited.then(() => started.delete(child.pid!));
  let out = '';
  const ready = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /ready (\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.stderr!.on('data', (d) => (out += d));
    child.on('exit', () => {
      const Failure = /EADDRINUSE|Address already in use/.test(out) ? PortTaken : Error;
      reject(new Failure(`${script} exited:\n${out}`));
    });
  });
  return {
    ready,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * Starts test/helpers/cluster.mjs: a PostgreSQL server of its own, in dataDir, on port (by default a free
 * one, another if that is taken before the server listens).
 */
export async function startCluster(dataDir: string, port?: number): Promise<Cluster> {
  const start = async (port: number) => {
    const { ready, stop } = await startHelper('cluster.mjs', [dataDir, String(port)], {});
    return { url: ready, port, stop };
  };
  return port === undefined ? onFreePort(start) : start(port);
}

export type OidcProvider = {
  issuer: string;
  setCodeTtl: (seconds: number) => Promise<void>;
  /** The token endpoint waits `delay` ms, then answers `status` with no token (0: its real answer). */
  setTokenAnswer: (delay: number, status?: number) => Promise<void>;
  stop: () => Promise<void>;
};

/**
 * Starts test/helpers/oidc-provider.mjs: a real OpenID provider (oidc-provider) on loopback, with one
 * client and the people given ({ sub: claims }).
 */
export async function startOidcProvider(
  client: Record<string, unknown>,
  accounts: Record<string, Record<string, unknown>>,
): Promise<OidcProvider> {
  const { ready: issuer, stop } = await onFreePort((port) =>
    startHelper('oidc-provider.mjs', [String(port)], {
      OIDC_TEST_CLIENT: JSON.stringify(client),
      OIDC_TEST_ACCOUNTS: JSON.stringify(accounts),
    }),
  );
  return {
    issuer,
    setCodeTtl: async (seconds) => {
      await fetch(`${issuer}/test/code-ttl?seconds=${seconds}`, { method: 'POST' });
    },
    setTokenAnswer: async (delay, status = 0) => {
      await fetch(`${issuer}/test/token?delay=${delay}&status=${status}`, { method: 'POST' });
    },
    stop,
  };
}

/** Polls a deletion until it leaves PENDING (or 10 s pass); returns its last status. */
export async function deletionOutcome(origin: string, authorization: string, id: number): Promise<string> {
  let status = 'PENDING';
  for (let i = 0; i < 100 && status === 'PENDING'; i++) {
    await new Promise((r) => setTimeout(r, 100));
    status = (await call(origin, 'GET', `/v1/deletions/${id}`, authorization)).body.status;
  }
  return status;
}

/** Every feed URL of the user, following `next` through all pages. */
export async function allFeedUrls(origin: string, authorization: string): Promise<Set<string>> {
  const urls = new Set<string>();
  let path: string | undefined = '/v1/subscriptions?per_page=500';
  while (path) {
    const r = await call(origin, 'GET', path, authorization);
    for (const s of r.body.subscriptions as { feed_url: string }[]) urls.add(s.feed_url);
    path = r.body.next ? new URL(r.body.next as string).pathname + new URL(r.body.next as string).search : undefined;
  }
  return urls;
}

/**
 * Eight clients looping on GET and POST (one new feed each) until the server stops. `signal()` is called
 * once, after 1.5 s of load, and its promise awaited; then the clients finish. A connection refused after
 * the signal is a request that was never accepted (the listener closed); anything else that is not a 200 is
 * a failure.
 */
export async function underLoad(
  origin: string,
  authorization: string,
  tag: string,
  signal: () => Promise<void>,
): Promise<{ ok: number; refused: number; failed: string[]; acknowledged: string[] }> {
  const errorCode = (err: unknown) => ((err as { cause?: { code?: string } }).cause?.code ?? String(err)) as string;
  const out = { ok: 0, refused: 0, failed: [] as string[], acknowledged: [] as string[] };
  let signalled = false;
  const clients = Array.from({ length: 8 }, async (_, c) => {
    for (let i = 0; ; i++) {
      const feed = `https://${tag}.example/${c}/${i}.xml`;
      try {
        const r =
          i % 2 === 0
            ? await call(origin, 'GET', '/v1/subscriptions?per_page=20', authorization)
            : await call(origin, 'POST', '/v1/subscriptions', authorization, { subscriptions: [{ feed_url: feed }] });
        if (r.status !== 200) out.failed.push(`status ${r.status}`);
        else {
          out.ok++;
          if (i % 2 === 1) out.acknowledged.push(feed);
        }
      } catch (err) {
        if (signalled && errorCode(err) === 'ECONNREFUSED') {
          out.refused++;
          return;
        }
        out.failed.push(errorCode(err));
        return;
      }
    }
  });
  // Signalled once the load is running: 1.5 s in and 60 answers given, whichever is later (a busy machine
  // answers fewer in 1.5 s, and a signal before the load would test nothing).
  const started = Date.now();
  while (Date.now() - started < 1500 || (out.ok < 60 && out.failed.length === 0 && Date.now() - started < 60_000))
    await new Promise((r) => setTimeout(r, 50));
  signalled = true;
  await signal();
  await Promise.all(clients);
  return out;
}

/**
 * A browser's visit: cookies kept, each form's token read from the page. A form is sent urlencoded, or as
 * multipart with `files` (field name to the file's bytes and name).
 */
export function browser(origin: string) {
  const cookies = new Map<string, string>();
  const send = async (p: string, form?: Record<string, string>, files?: Record<string, [Uint8Array, string]>) => {
    let body: FormData | string | undefined = form && new URLSearchParams(form).toString();
    if (form && files) {
      const multipart = new FormData();
      for (const [k, v] of Object.entries(form)) multipart.append(k, v);
      for (const [k, [bytes, name]] of Object.entries(files)) multipart.append(k, new Blob([bytes]), name);
      body = multipart;
    }
    const r = await fetch(origin + p, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(typeof body === 'string' && { 'content-type': 'application/x-www-form-urlencoded' }),
      },
      body,
    });
    for (const c of r.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const [k, v] = pair!.split('=') as [string, string];
      cookies.set(k, v);
    }
    return { status: r.status, text: await r.text(), location: r.headers.get('location') };
  };
  const token = (html: string) => /name="_csrf" value="([^"]*)"/.exec(html)![1]!;
  return { send, token, origin: () => origin, withOrigin: (o: string) => (origin = o) };
}

/** Peak resident memory so far of a process (VmHWM of /proc/<pid>/status), in MiB. */
export function peakMib(pid: number): number {
  const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) / 1024;
}
