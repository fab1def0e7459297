// The transfer service, one seam for every door: what they may call, by name (docs/moving.md).
// Running an import (run-import.ts; the summary it gives, import.ts), the archive out and in (archive.ts),
// another server and its errors (remote.ts), a gpodder.net archive (gpodder-archive.ts), idle accounts'
// archives (idle.ts), the web page's imports as jobs (jobs.ts), and starting over (start-over.ts). The files
// behind it import each other, never this one; the sources, the repo and zstd frames stay inside the room.
export {
  ARCHIVE_VERSION,
  archivePieces,
  archiveText,
  archiveTextOf,
  checkArchiveStart,
  exportArchive,
  parseArchive,
} from './archive';
export type { Counts, KeepLimits } from './archive';
export {
  checkGpodderArchiveStart,
  gpodderArchiveLimits,
  readGpodderArchive,
  readGpodderArchiveFile,
} from './gpodder-archive';
export type { ArchiveLimits } from './gpodder-archive';
export { archiveFile, archiveIdle, checkArchiveFolder, forgetArchived, idleTasks, restoreArchived } from './idle';
export type { Outcome } from './idle';
export { REFUSED_LISTED } from './import';
export type { Summary } from './import';
export { listImports, startImport, transferTasks } from './jobs';
export type { ImportView } from './jobs';
export { ImportFailed, remoteLimits, serverAddress } from './remote';
export { importAlone, ImportUnderWay } from './turns';
export { localFile } from './uploads';
export type { FileBytes } from './uploads';
export { runImport } from './run-import';
export { startOver } from './start-over';
export type { ImportOptions, ImportSource } from './run-import';
export type { Progress, Snapshot, Source } from './sources';
