import type { Db } from '../db/pool';
import type { AddressPolicy } from '../feeds/service';
import { DEFAULT_KEEP, importArchive, readArchive, type KeepLimits } from './archive';
import { readGpodderArchive, type ArchiveLimits } from './gpodder-archive';
import { importSnapshot, type Summary } from './import';
import { ImportFailed, RemoteServer, type RemoteLimits } from './remote';
import { readers, type Progress, type Source } from './sources';
import type { FileBytes } from './uploads';

// Moving to castsync and leaving it: importing what another sync server or an archive holds, and the
// archive (docs/moving.md). The CLI runs an import itself; the web page runs it as a job (jobs.ts).

/**
 * Where an import reads from: another server, as one of its users; an archive, its text or its file; a
 * gpodder.net archive's file. A file is read as it streams, twice (checked whole, then stored).
 */
export type ImportSource =
  | { source: Source; serverUrl: string; remoteUser: string; password: string }
  | { source: 'archive'; document: string }
  | { source: 'archive'; file: FileBytes }
  | { source: 'gpodder-archive'; file: FileBytes; limits: ArchiveLimits };

export type ImportOptions = {
  dryRun: boolean;
  /** The addresses the remote server may have (the web page's import: the feed fetcher's policy). */
  policy: AddressPolicy;
  limits: RemoteLimits;
  /** The server's bounds on favourites and Up next, which an archive's restore keeps to (without: the defaults of FAVOURITES_MAX and QUEUE_MAX_ITEMS). */
  keep?: KeepLimits;
  progress: Progress;
  signal?: AbortSignal;
};

/**
 * Reads the source whole (nothing is written while it is read: a wrong password or a broken server leaves
 * the user as they were), then imports it step by step. A failure once writing began says where it stopped:
 * what was written stays, and running the same import again completes it (nothing is imported twice).
 */
export async function runImport(db: Db, userId: number, from: ImportSource, options: ImportOptions): Promise<Summary> {
  let last = '';
  const progress: Progress = (step, done, total) => {
    last = total === undefined ? step : `${step} (${done ?? 0} of ${total})`;
    options.progress(step, done, total);
  };
  let reading = true;
  try {
    if (from.source === 'gpodder-archive') {
      progress('reading the archive');
      const brought = await readGpodderArchive(from.file, from.limits);
      reading = false;
      return await importSnapshot(db, userId, brought, { dryRun: options.dryRun, progress });
    }
    if (from.source === 'archive') {
      progress('reading the archive');
      const archive = await readArchive('file' in from ? from.file : () => [Buffer.from(from.document)]);
      reading = false;
      return await importArchive(db, userId, archive, {
        dryRun: options.dryRun,
        progress,
        keep: options.keep ?? DEFAULT_KEEP,
      });
    }
    const remote = new RemoteServer(
      from.serverUrl,
      from.remoteUser,
      from.password,
      options.policy,
      options.limits,
      options.signal,
    );
    const snapshot = await readers[from.source](remote, progress);
    reading = false;
    return await importSnapshot(db, userId, snapshot, { dryRun: options.dryRun, progress });
  } catch (err) {
    if (reading || options.dryRun) throw err;
    const why = err instanceof Error ? err.message : String(err);
    throw new ImportFailed(
      `${why}. The import stopped while ${last}: what was imported before stays, and running the same import again completes it`,
    );
  }
}
