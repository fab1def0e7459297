import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import * as auth from '../auth/service';
import { AuthCache, type AuthContext } from '../auth/service';
import type { Config } from '../config';
import type { Db } from '../db/pool';
import { InvalidInput } from '../errors';
import { writeFileDurably } from '../files';
import type { TaskList } from '../jobs/worker';
import type { Logger } from '../logger';
import { archiveTextOf, importArchive, parseArchive, type Archive, type Counts, type KeepLimits } from './archive';
import type { Summary } from './import';
import type { Progress } from './sources';

// Idle accounts (docs/idle-accounts.md): each idle user's archive kept in the database with the archived
// account that stays to answer their sign-in, in the transaction that removes the user and only once it
// reads back as written (and, asked for, a copy written to a folder and read back first); and the restore.
// In the database, every instance of castsync reaches it.

type Admin = Pick<AuthContext, 'db' | 'authCache'>;

export const countsOf = (a: Archive): Counts => ({
  subscriptions: a.subscriptions.length,
  actions: a.episode_actions.length,
  devices: a.devices.length,
  favourites: a.favourites.length,
  queue: a.queue.length,
});

/**
 * An idle user, archived (`removed`), or left as they were because they changed while being archived;
 * `file`: the archive's copy in a folder, when one was asked for.
 */
export type Outcome = auth.Idle & { file: string | null; counts: Counts; removed: boolean };

const gzip = promisify(zlib.gzip);
const gunzip = promisify(zlib.gunzip);

/** The text of an archive the database keeps (compressed). */
const textOf = async (stored: Buffer): Promise<string> => (await gunzip(stored)).toString('utf8');

/** Whether `back`, read back from where it was written, is `text`: the same text, the user's, as many of each. */
function readsBack(back: string | undefined, text: string, username: string, counts: Counts): boolean {
  const read = back === text ? parseArchive(back) : undefined;
  return read?.user === username && JSON.stringify(countsOf(read)) === JSON.stringify(counts);
}

/** Where an idle user's archive goes: DIR/NAME.json (a username has no slash). */
export const archiveFile = (dir: string, username: string): string => path.resolve(dir, `${username}.json`);

const why = (err: unknown) => (err as NodeJS.ErrnoException).code ?? (err as Error).message;

/** The advisory lock archive runs take turns on: the class (the bytes of "csar") and the object. */
const ARCHIVE_LOCK = [0x63736172, 0] as const;

/** Another archive run (the command, or the nightly job) holds the lock: this one did nothing. */
export class ArchiveRunUnderWay extends InvalidInput {
  constructor() {
    super(
      'Another archive run is under way (users archive, or the nightly job): this one changed nothing. ' +
        'Run it again when that one is done',
    );
  }
}

/** Throws unless the run still holds its lock (its connection lost, the lock is gone with it). */
type Held = () => Promise<void>;

/**
 * Runs fn holding the archive runs' lock, a session-level advisory lock on a connection of its own: a
 * second run at the same time is refused (ArchiveRunUnderWay). PostgreSQL releases the lock when that
 * connection ends, whatever ends it; `held` checks it is still there (before each file and each removal),
 * so a run whose lock went with a restart of the database stops, and never works beside the next one.
 */
async function exclusively<T>(db: Db, fn: (held: Held) => Promise<T>): Promise<T> {
  const client = await db.connect();
  let broken: Error | undefined;
  try {
    const r = await client.query<{ got: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS got', [...ARCHIVE_LOCK]);
    if (!r.rows[0]?.got) throw new ArchiveRunUnderWay();
    const held = () =>
      client.query('SELECT 1').then(
        () => undefined,
        (err: unknown) => {
          broken = err as Error;
          throw new InvalidInput(`The archive run lost its lock on the database (${why(err)}): it stopped there`);
        },
      );
    try {
      return await fn(held);
    } finally {
      if (!broken)
        await client.query('SELECT pg_advisory_unlock($1, $2)', [...ARCHIVE_LOCK]).catch((e: Error) => (broken = e));
    }
  } finally {
    client.release(broken);
  }
}

/**
 * After a user was left as they were: the copy's file goes, but only if it still holds what this run wrote
 * and no archived account names it (an earlier release's account has no other copy). Rare, so every
 * account is looked at.
 */
async function dropUnused(ctx: Admin, file: string, text: string): Promise<void> {
  const now = await fs.readFile(file, 'utf8').catch(() => undefined);
  if (now !== text) return;
  const named = (await auth.archivedAccounts(ctx.db)).some((a) => a.file !== null && path.resolve(a.file) === file);
  if (!named) await fs.rm(file, { force: true });
}

/**
 * Writes an archive's copy to `file` (whole, flushed to disk) and reads it back: the text and the counts as
 * written. `nothing`: what the failure's message says was left as it was.
 */
async function writeCopy(file: string, text: string, username: string, nothing: string): Promise<void> {
  const counts = countsOf(parseArchive(text));
  await writeFileDurably(file, text).catch((err: unknown) => {
    throw new InvalidInput(`Could not write the archive ${file} (${why(err)}): ${nothing}`);
  });
  const back = await fs.readFile(file, 'utf8').catch((err: unknown) => {
    throw new InvalidInput(`Could not read back the archive ${file} (${why(err)}): ${nothing}`);
  });
  if (!readsBack(back, text, username, counts)) {
    throw new InvalidInput(`The archive ${file} did not read back as it was written: ${nothing}`);
  }
}

/**
 * Archives one idle user: their archive (with a copy in `dir`, written and read back first, when asked)
 * kept with their archived account, in the transaction that removes the user, and read back from the
 * database before it commits; if anything of theirs changed meanwhile the user stays (and the copy goes).
 * A failure before the removal removes nothing and says so.
 */
async function archiveOne(
  ctx: Admin,
  user: auth.Idle,
  before: Date,
  dir: string | undefined,
  held: Held,
): Promise<Outcome> {
  const { text, counts } = await archiveTextOf(ctx.db, user.userId, user.username);
  const nothing = `nothing of ${user.username} was removed`;
  await held();
  // Archived meanwhile (by a run beside this one, were there one): its copy is not to be overwritten.
  if (await auth.archivedAccount(ctx.db, user.username)) {
    throw new InvalidInput(`${user.username} was archived meanwhile by another run: this one stopped there`);
  }
  const file = dir === undefined ? null : archiveFile(dir, user.username);
  if (file !== null) await writeCopy(file, text, user.username, nothing);
  const readBack = async (stored: Buffer) => {
    if (!readsBack(await textOf(stored).catch(() => undefined), text, user.username, counts)) {
      throw new InvalidInput(`The archive of ${user.username} did not read back from the database: ${nothing}`);
    }
  };
  await held();
  const removed = await auth.archiveUser(ctx, user, before, { archive: await gzip(text), file, readBack });
  if (!removed && file !== null) await dropUnused(ctx, file, text);
  return { ...user, file, counts, removed };
}

/**
 * Checks that `dir` is a folder this process can write to (a file made there, flushed and removed): where
 * archives' copies go, checked by each run and by the server at its start.
 */
export async function checkArchiveFolder(dir: string): Promise<void> {
  const folder = await fs.stat(dir).catch(() => undefined);
  if (!folder?.isDirectory()) throw new InvalidInput(`No folder ${dir} to write the archives to: nothing was removed`);
  const probe = path.join(dir, `.castsync-write-check-${randomUUID()}`);
  await writeFileDurably(probe, '')
    .then(() => fs.rm(probe))
    .catch((err: unknown) => {
      throw new InvalidInput(`Cannot write to the folder of the archives ${dir} (${why(err)}): nothing was removed`);
    });
}

/**
 * Archives every user last active before `before`, one after the other, each archive kept in the database
 * (and a copy in `dir`, when given); with `dryRun`, only lists them. Stops at the first archive that
 * cannot be written (the users after it are left as they are).
 * One run at a time: a run started while another is under way is refused (ArchiveRunUnderWay).
 */
export async function archiveIdle(
  ctx: Admin,
  { before, dir, dryRun = false, each, signal }: ArchiveRun,
): Promise<{ idle: auth.Idle[]; outcomes: Outcome[] }> {
  if (before.getTime() > Date.now()) throw new InvalidInput('The date an account is idle since is not in the past');
  if (dir !== undefined) await checkArchiveFolder(dir);
  if (dryRun) return { idle: await auth.idleUsers(ctx.db, before), outcomes: [] };
  return exclusively(ctx.db, async (held) => {
    const idle = await auth.idleUsers(ctx.db, before);
    const outcomes: Outcome[] = [];
    for (const user of idle) {
      if (signal?.aborted) break;
      const outcome = await archiveOne(ctx, user, before, dir, held);
      outcomes.push(outcome);
      each?.(outcome);
    }
    return { idle, outcomes };
  });
}

export type ArchiveRun = {
  before: Date;
  /** A folder each archive's copy is also written to (NAME.json). */
  dir?: string | undefined;
  dryRun?: boolean;
  /** Told of each user as they are archived (or left). */
  each?: (o: Outcome) => void;
  signal?: AbortSignal;
};

/**
 * Why a restore did not begin: its file cannot be read. Nothing changed: an archived account stays, and
 * the file it names, if moved, can be named instead.
 */
function unreadable(username: string, file: string, reason: string, { archived = false, named = false }): string {
  const what = reason === 'ENOENT' ? `there is no file ${file}` : `${file} cannot be read (${reason})`;
  const kept = archived ? `, and ${username} stays archived` : '';
  const where =
    archived && !named ? `; if the file was moved, name it: castsync users restore ${username} --file FILE` : '';
  return `Cannot restore ${username}: ${what}. Nothing was changed${kept}${where}`;
}

/**
 * The archive a restore reads, and where from: `file` when named; else the one the archived account keeps
 * in the database (`file` undefined); else (archived by an earlier release) the file it was archived to.
 */
async function archiveToRestore(ctx: Admin, username: string, file: string | undefined) {
  const archived = await auth.archivedAccount(ctx.db, username);
  const stored = file === undefined ? await auth.storedArchive(ctx.db, username) : undefined;
  if (stored) return { text: await textOf(stored), file: undefined };
  const source = file ?? archived?.file ?? undefined;
  if (source === undefined) throw new InvalidInput(`No archived account ${username}: name its archive file`);
  const text = await fs.readFile(source, 'utf8').catch((err: unknown) => {
    const how = { archived: archived !== undefined, named: file !== undefined };
    throw new InvalidInput(unreadable(username, source, why(err), how));
  });
  return { text, file: source };
}

/**
 * Brings an archived user back from their archive (`file`, else the one their archived account keeps):
 * the user made again as they were (password, role, app passwords, identity links; without a password
 * when there is no archived account), then the archive imported, then the archived account forgotten. A
 * restore that stops part way is completed by running it again.
 */
export async function restoreArchived(
  ctx: Admin,
  username: string,
  { file, keep, progress }: { file?: string | undefined; keep: KeepLimits; progress: Progress },
) {
  const source = await archiveToRestore(ctx, username, file);
  const archive = parseArchive(source.text);
  if (archive.user !== username) {
    throw new InvalidInput(`${source.file ?? 'The archive'} is the archive of ${archive.user}, not of ${username}`);
  }
  const user = await auth.reviveUser(ctx, username);
  let summary: Summary;
  try {
    summary = await importArchive(ctx.db, user.userId, archive, { dryRun: false, progress, keep });
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new InvalidInput(`${reason}. The restore stopped part way: run it again to complete it`);
  }
  if (user.how !== 'new') await auth.forgetArchived(ctx, username);
  return { ...user, file: source.file, summary };
}

/**
 * Forgets an archived account, so that its name is free again. Its archive, when the database keeps it,
 * is first written to `file` and read back (without a file named, nothing is forgotten): `import archive`
 * can then bring it into any user.
 */
export async function forgetArchived(ctx: Admin, username: string, file: string | undefined): Promise<void> {
  const stored = await auth.storedArchive(ctx.db, username);
  if (stored && file === undefined) {
    throw new InvalidInput(
      `The archive of ${username} is kept in the database only: name a file to keep it in ` +
        `(castsync users forget-archived ${username} --file FILE); nothing was changed`,
    );
  }
  if (stored && file !== undefined) await writeCopy(file, await textOf(stored), username, 'nothing was changed');
  await auth.forgetArchived(ctx, username);
}

export const ARCHIVE_IDLE_TASK = 'archive_idle_accounts';

/**
 * With ARCHIVE_IDLE_AFTER_DAYS: every night, the users idle that many days archived (a copy of each archive
 * in ARCHIVE_DIR, when set). A run that cannot write an archive stops, logs why, and is tried again the next
 * night; one that finds another run under way (the command, or this job run again after a restart) leaves
 * it to that one.
 */
export function idleTasks({ db, logger, config }: { db: Db; logger: Logger; config: Config }): TaskList {
  const { archiveIdleAfterDays: days, archiveDir: dir } = config;
  if (days === undefined) return { tasks: {} };
  const stopping = new AbortController();
  const ctx = { db, authCache: new AuthCache(0) };
  return {
    tasks: {
      [ARCHIVE_IDLE_TASK]: async () => {
        const before = new Date(Date.now() - days * 24 * 3600_000);
        const each = (o: Outcome) =>
          logger.info(
            { user: o.username, lastActive: o.lastActive, file: o.file, ...o.counts },
            o.removed ? 'idle account archived' : 'idle account became active while archived: left as it is',
          );
        try {
          const run = await archiveIdle(ctx, { before, dir, each, signal: stopping.signal });
          logger.info({ idle: run.idle.length, before }, 'idle accounts archived');
        } catch (err) {
          if (!(err instanceof InvalidInput)) throw err;
          if (err instanceof ArchiveRunUnderWay)
            logger.warn({ before }, 'idle accounts left to the archive run under way');
          else logger.error({ reason: err.reason }, 'archiving idle accounts stopped');
        }
      },
    },
    crontab: [`30 3 * * * ${ARCHIVE_IDLE_TASK}`],
    stop: () => stopping.abort(),
  };
}
