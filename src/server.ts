import http from 'node:http';
import net from 'node:net';
import { createApp, type AppState } from './app';
import { AuthCache, authTasks, credentialChanges } from './auth/service';
import { ConfigError, loadConfig, type Config } from './config';
import { whenDatabaseUp } from './db/connect';
import { openDatabase } from './db/database';
import { listen, notifyThrough } from './db/notifications';
import { createPool, type Db } from './db/pool';
import { deletionTasks } from './deletions/service';
import { retentionTasks } from './episodes/service';
import { feedTasks } from './feeds/service';
import { newItemsHook, notificationCleanupTasks, notificationTasks } from './notifications/service';
import { authLimits, failureBlocks, limitTasks } from './http/limits';
import { Foreground } from './jobs/foreground';
import { startWorker } from './jobs/worker';
import { migrateDatabase } from './jobs/migrate';
import { syncCleanupTasks } from './sync/service';
import { checkArchiveFolder, idleTasks, transferTasks } from './transfer/service';
import { createLogger, type Logger } from './logger';

async function main(config: Config, logger: Logger) {
  const database = await openDatabase(config, logger, { attach: false });
  await whenDatabaseUp(() => migrateDatabase(database.url, logger), logger);
  const db = createPool(database.url, { max: config.dbPoolMax, timeoutMs: config.dbTimeoutMs, logger });
  const authCache = new AuthCache(config.authCacheTtl * 1000);
  const limits = authLimits(config, db);
  const listener = listen(database.url, [credentialChanges(authCache), failureBlocks(limits)], logger, {
    notify: notifyThrough(db),
  });
  const state: AppState = { draining: false };
  const foreground = new Foreground();
  const app = createApp({ db, config, logger, authCache, limits, state, foreground });
  const tasks = backgroundTasks(db, logger, config, foreground);
  // The nightly archive run writes its copies there: a folder it cannot write to stops the start, not a night's run.
  if (config.worker && config.archiveIdleAfterDays !== undefined && config.archiveDir !== undefined) {
    await checkArchiveFolder(config.archiveDir);
  }
  const worker = config.worker ? await startWorker({ db, databaseUrl: database.url, logger }, tasks) : undefined;

  const server = await serve(app, config);
  const address = server.address() as net.AddressInfo;
  logger.info({ host: address.address, port: address.port, embeddedDatabase: database.embedded }, 'castsync listening');

  const stop = async () => {
    await worker?.stop();
    await listener.stop();
    await db.end();
    await database.stop();
  };
  shutdownOn(config, logger, { server, state, stop });
  // graphile-worker (0.17) records a job's end without awaiting it: when the database goes away just as a
  // job ends, that promise rejects with nobody to catch it, and Node would end the process. The API must
  // outlive a database outage (docs/operations.md), so such a rejection is logged and the server goes on.
  process.on('unhandledRejection', (err) => {
    logger.error({ err }, 'a background promise failed with nobody to handle it; the server goes on');
  });
}

/** What the worker runs: every feature's task list (the feed fetcher's when FEED_FETCH is on). */
function backgroundTasks(db: Db, logger: Logger, config: Config, foreground: Foreground) {
  const tasks = [
    deletionTasks(db, logger),
    authTasks(db, logger),
    limitTasks(db, logger),
    transferTasks({ db, logger, config }),
    idleTasks({ db, logger, config }),
    retentionTasks({ db, logger, config }),
    notificationTasks({ db, logger, config }),
    notificationCleanupTasks({ db, logger }),
    syncCleanupTasks({ db, logger }),
  ];
  // The fetcher notes new-episode events in its transaction, for the notifications room above it.
  if (config.feedFetch) tasks.push(feedTasks({ db, logger, config, foreground, newItems: newItemsHook }));
  return tasks;
}

/** The HTTP server, listening. */
async function serve(app: http.RequestListener, config: Config): Promise<http.Server> {
  const server = http.createServer(app);
  server.keepAliveTimeout = 65_000;
  // Requests Node's HTTP parser refuses never reach the app; they still get the contract's error body.
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy();
    const [status, message] =
      err.code === 'HPE_HEADER_OVERFLOW' ? [431, 'Request headers too large'] : [400, 'Bad request'];
    const body = JSON.stringify({ code: String(status), message });
    socket.end(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, resolve);
  });
  return server;
}

/** What a shutdown ends: the HTTP server, drained, then the rest (the worker, the listener, the database). */
type Running = { server: http.Server; state: AppState; stop: () => Promise<void> };

/** SIGTERM and SIGINT drain the requests, then stop the rest; SIGQUIT exits at once. */
function shutdownOn(config: Config, logger: Logger, { server, state, stop }: Running): void {
  let stopping = false;
  const shutdown = async (signal: string) => {
    // A signal to the process group reaches node more than once (npm forwards its own copy): further
    // SIGTERM/SIGINT never cut the drain short. SIGQUIT (Ctrl-\) is the way to force an exit.
    if (stopping) {
      logger.info({ signal }, 'already shutting down: draining goes on (SIGQUIT exits at once)');
      return;
    }
    stopping = true;
    // Requests get 70 % of SHUTDOWN_TIMEOUT; the rest is for the worker and the database to stop. Should
    // that hang, the process still ends at SHUTDOWN_TIMEOUT, before a service manager's SIGKILL.
    const timeoutMs = config.shutdownTimeout * 1000;
    setTimeout(() => {
      logger.error({ timeoutMs }, 'shutdown did not finish within SHUTDOWN_TIMEOUT: exiting');
      process.exit(1);
    }, timeoutMs).unref();
    logger.info({ signal }, 'shutting down: draining requests');
    state.draining = true;
    await drain(server, timeoutMs * 0.7, logger);
    try {
      await stop();
      logger.info('stopped');
      process.exit(0);
    } catch (err) {
      logger.error({ err }, 'error during shutdown');
      process.exit(1);
    }
  };
  for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, (s) => void shutdown(s));
  process.on('SIGQUIT', () => {
    // The embedded PostgreSQL stops by itself when this process is gone (db/postgres-keeper.ts).
    logger.warn({ signal: 'SIGQUIT' }, 'exiting at once, without draining');
    process.exit(1);
  });
}

/** The server stops listening and closes once its requests are answered; at `deadlineMs`, what is still open is cut. */
async function drain(server: http.Server, deadlineMs: number, logger: Logger): Promise<void> {
  // Stop listening, but let each open connection finish its request: every response now says
  // "Connection: close", so keep-alive clients reconnect (elsewhere) instead of being cut off.
  server.on('request', (_req, res: http.ServerResponse) => res.setHeader('Connection', 'close'));
  const closed = new Promise<void>((resolve) => net.Server.prototype.close.call(server, () => resolve()));
  const idleSweep = setTimeout(() => server.closeIdleConnections(), 1000);
  const force = setTimeout(() => {
    logger.warn('requests still open at the drain deadline: closing their connections');
    server.closeAllConnections();
  }, deadlineMs);
  await closed;
  clearTimeout(idleSweep);
  clearTimeout(force);
}

let config: Config;
try {
  config = loadConfig();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`castsync: ${err.message}\n`);
  process.exit(1);
}
const logger = createLogger(config.logLevel);
main(config, logger).catch((err: unknown) => {
  logger.fatal({ err }, 'castsync could not start');
  process.exit(1);
});
