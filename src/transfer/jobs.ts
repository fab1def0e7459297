import type { JobHelpers } from 'graphile-worker';
import type { Config } from '../config';
import { isDatabaseUnavailable } from '../db/errors';
import { withTransaction, type Db, type Queryable } from '../db/pool';
import { InvalidInput } from '../errors';
import type { AddressPolicy } from '../feeds/service';
import { addJob } from '../jobs/queue';
import type { TaskList } from '../jobs/worker';
import type { Logger } from '../logger';
import type { Summary } from './import';
import { remoteLimits, type RemoteLimits } from './remote';
import * as repo from './repo';
import type { KeepLimits } from './archive';
import { gpodderArchiveLimits, type ArchiveLimits } from './gpodder-archive';
import { runImport, type ImportSource } from './run-import';
import { claimTurn } from './turns';
import { storeUpload, uploadBytes } from './uploads';

// Imports started on the web page run as jobs: the request only writes what to import (and the job that
// will), so a long import neither holds a request open nor dies with the process. A job cut off by a crash
// runs again after the restart (src/jobs/liveness.ts): every step of an import leaves alone what is already
// there, so running it again resumes it, and the page says it was resumed.

export const IMPORT_TASK = 'import';

/**
 * An import cut off this many times (a restart, a crash, the database away) is ended failed at its next
 * run. Counted by the import itself: a run killed with its process never gets to say it failed, and an
 * import whose job the queue had given up on stayed running for good, and refused every later import.
 */
export const IMPORT_RUNS = 3;

/** What the page shows of an import. */
export type ImportView = Omit<repo.ImportRow, 'summary' | 'secret'> & { summary: Summary | null };

/** A file uploaded to import: its bytes as they came, kept in the database until the import ends (uploads.ts). */
export type Upload = { source: 'archive' | 'gpodder-archive'; upload: Uint8Array[] };
type Started = Extract<ImportSource, { password: string }> | Upload;

/**
 * Writes an import and its job in one transaction: a started import always has a job that will run it.
 * Refused (ImportUnderWay) while the user has another import queued or running.
 */
export async function startImport(db: Db, userId: number, from: Started, dryRun: boolean): Promise<number> {
  return withTransaction(db, async (tx) => {
    await claimTurn(tx, userId);
    const id = await repo.insertImport(
      tx,
      userId,
      'upload' in from
        ? // The file is not secret: the job reads it from import_uploads.
          { source: from.source, serverUrl: null, remoteUser: null, dryRun, secret: '' }
        : {
            source: from.source,
            serverUrl: from.serverUrl,
            remoteUser: from.remoteUser,
            dryRun,
            secret: from.password,
          },
    );
    if ('upload' in from) await storeUpload(tx, userId, id, from.upload);
    // The queue's attempts outnumber the runs, so that a run is left to end an import cut off every time.
    await addJob(tx, IMPORT_TASK, { importId: id }, { maxAttempts: IMPORT_RUNS + 2 });
    return id;
  });
}

export const listImports = (db: Queryable, userId: number, limit = 10): Promise<ImportView[]> =>
  repo.listImports(db, userId, limit) as Promise<ImportView[]>;

/** At most one progress write per this long. */
const PROGRESS_EVERY_MS = 500;

/**
 * Runs one import. An import that cannot go on (the other server refused, broke its answers, an archive
 * that is not one) ends failed with the reason, and is not tried again. A failure of this server
 * (the database away) goes to the queue, which tries again later; the last run (IMPORT_RUNS) ends it failed.
 */
type Deps = {
  db: Db;
  logger: Logger;
  policy: AddressPolicy;
  limits: RemoteLimits;
  keep?: KeepLimits;
  archive: ArchiveLimits;
  signal?: AbortSignal;
};

export async function runImportJob(
  deps: Deps,
  importId: number,
  attempt: { last: boolean } = { last: true },
): Promise<void> {
  const { db, logger } = deps;
  const row = await repo.begin(db, importId);
  if (!row || row.secret === null) return;
  if (row.runs > IMPORT_RUNS) return endCutOff(deps, importId);
  const last = attempt.last || row.runs === IMPORT_RUNS;
  let lastWrite = 0;
  const resumed = row.runs > 1 ? 'resumed after a restart: ' : '';
  const progress = (step: string, done?: number, total?: number) => {
    const now = Date.now();
    if (now - lastWrite < PROGRESS_EVERY_MS && done !== total) return;
    lastWrite = now;
    const text = `${resumed}${step}${total === undefined ? '' : ` (${done ?? 0} of ${total})`}`;
    repo
      .setProgress(db, importId, text)
      .catch((err: unknown) => logger.warn({ err, importId }, 'import progress not written'));
  };
  const file = () => uploadBytes(db, row.user_id, importId);
  const from: ImportSource =
    row.source === 'archive'
      ? { source: 'archive', file }
      : row.source === 'gpodder-archive'
        ? { source: 'gpodder-archive', file, limits: deps.archive }
        : { source: row.source, serverUrl: row.server_url!, remoteUser: row.remote_user!, password: row.secret };
  try {
    const summary = await runImport(db, row.user_id, from, {
      policy: deps.policy,
      limits: deps.limits,
      keep: deps.keep,
      signal: deps.signal,
      dryRun: row.dry_run,
      progress,
    });
    await repo.finish(db, importId, { state: 'done', summary });
  } catch (err) {
    // Stopped with the server: the import stays running, and its job resumes it after the restart.
    if (deps.signal?.aborted) throw err;
    // ImportFailed is an InvalidInput: a reason to show.
    const expected = err instanceof InvalidInput;
    if (!expected && !last && isDatabaseUnavailable(err)) throw err;
    if (!expected) logger.error({ err, importId }, 'import failed');
    const why = err instanceof Error ? err.message : String(err);
    await repo.finish(db, importId, { state: 'failed', error: expected ? why : `Stopped by a server error: ${why}` });
  }
}

/** Ends failed an import that was cut off IMPORT_RUNS times, without running it again. */
async function endCutOff({ db, logger }: Deps, importId: number): Promise<void> {
  const error = `Stopped ${IMPORT_RUNS} times before it could end (the server restarted or failed): start it again`;
  logger.warn({ importId, runs: IMPORT_RUNS }, 'import cut off too often: ended');
  await repo.finish(db, importId, { state: 'failed', error });
}

/**
 * The import task. The web page's imports reach other servers under the feed fetcher's address policy
 * (no private or loopback address unless FEED_FETCH_ALLOW_PRIVATE or IMPORT_ALLOW_PRIVATE allows them; a
 * home Nextcloud is often on a private address), within IMPORT_TIMEOUT and IMPORT_MAX_BYTES for each answer,
 * and IMPORT_TOTAL_TIMEOUT and IMPORT_TOTAL_MAX_BYTES for all of them.
 */
export function transferTasks({ db, logger, config }: { db: Db; logger: Logger; config: Config }): TaskList {
  const stopping = new AbortController();
  const deps: Deps = {
    db,
    logger,
    policy: {
      allowPrivate: config.feedFetchAllowPrivate || config.importAllowPrivate,
      allowCidrs: config.feedFetchAllowCidrs,
    },
    limits: remoteLimits(config),
    keep: { maxFavourites: config.favouritesMax, maxQueueItems: config.queueMaxItems },
    archive: gpodderArchiveLimits(config),
    signal: stopping.signal,
  };
  return {
    tasks: {
      [IMPORT_TASK]: async (payload, helpers: JobHelpers) => {
        const last = helpers.job.attempts >= helpers.job.max_attempts;
        await runImportJob(deps, (payload as { importId: number }).importId, { last });
      },
    },
    stop: () => stopping.abort(),
  };
}
