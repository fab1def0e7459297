import fs from 'node:fs/promises';
import path from 'node:path';
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

// Idle accounts (docs/idle-auth.md): each idle user's archive written to a folder and read back, and
// only then the user removed, an archived account staying to answer their sign-in; and the restore.

type Admin = Pick<AuthContext, 'db' | 'authCache'>;

export const countsOf = (a: Archive): Counts => ({
  subscriptions: a.subscriptions.length,
  actions: a.episode_actions.length,
  devices: a.devices.length,
  favourites: a.favourites.length,
  queue: a.queue.length,
});

/** An idle user, archived (`removed`), or left as they were because they changed while being archived. */
export type Outcome = auth.Idle & { file: string; counts: Counts; removed: boolean };

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
 * After a user was left as they were: the file goes, but only if it still holds what this run wrote and
 * no archived account names it (then it is that account's only copy). Rare, so every account is looked at.
 */
async function dropUnused(ctx: Admin, file: string, text: string): Promise<void> {
  const now = await fs.readFile(file, 'utf8').catch(() => undefined);
  if (now !== text) return;
  const named = (await auth.archivedAccounts(ctx.db)).some((a) => path.resolve(a.file) === file);
  if (!named) await fs.rm(file, { force: true });
}

/**
 * Archives one idle user: their archive written (whole, flushed to disk) and read back, the text and the
 * counts as written; then the user removed, if nothing of theirs changed meanwhile (else the file this
 * run wrote goes and the user stays). A failure before the removal removes nothing and says so.
 */
async function archiveOne(ctx: Admin, user: auth.Idle, before: Date, dir: string, held: Held): Promise<Outcome> {
  const file = archiveFile(dir, user.username);
  const { text, counts } = await archiveTextOf(ctx.db, user.userId, user.username);
  const nothing = `nothing of ${user.username} was removed`;
  await held();
  // Archived meanwhile (by a run beside this one, were there one): its file is not to be overwritten.
  if (await auth.archivedAccount(ctx.db, user.username)) {
    throw new InvalidInput(`${user.username} was archived meanwhile by another run: this one stopped there`);
  }
  await writeFileDurably(file, text).catch((err: unknown) => {
    throw new InvalidInput(`Could not write the archive ${file} (${why(err)}): ${nothing}`);
  });
  const back = await fs.readFile(file, 'utf8').catch((err: unknown) => {
    throw new InvalidInput(`Could not read back the archive ${file} (${why(err)}): ${nothing}`);
  });
  const read = back === text ? parseArchive(back) : undefined;
  if (read?.user !== user.username || JSON.stringify(countsOf(read)) !== JSON.stringify(counts)) {
    throw new InvalidInput(`The archive ${file} did not read back as it was written: ${nothing}`);
  }
  await held();
  const removed = await auth.archiveUser(ctx, user, before, file);
  if (!removed) await dropUnused(ctx, file, text);
  return { ...user, file, counts, removed };
}

/**
 * Archives every user last active before `before` into `dir`, one after the other; with `dryRun`, only
 * lists them. Stops at the first archive that cannot be written (the users after it are left as they are).
 * One run at a time: a run started while another is under way is refused (ArchiveRunUnderWay).
 */
export async function archiveIdle(
  ctx: Admin,
  { before, dir, dryRun = false, each, signal }: ArchiveRun,
): Promise<{ idle: auth.Idle[]; outcomes: Outcome[] }> {
  if (before.getTime() > Date.now()) throw new InvalidInput('The date an account is idle since is not in the past');
  const folder = await fs.stat(dir).catch(() => undefined);
  if (!folder?.isDirectory()) throw new InvalidInput(`No folder ${dir} to write the archives to: nothing was removed`);
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
  dir: string;
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
 * Brings an archived user back from their archive (`file`, else the one they were archived to): the user
 * made again as they were (password, role, app passwords, identity links; without a password when there
 * is no archived account), then the archive imported, then the archived account forgotten. A restore that
 * stops part way is completed by running it again.
 */
export async function restoreArchived(
  ctx: Admin,
  username: string,
  { file, keep, progress }: { file?: string | undefined; keep: KeepLimits; progress: Progress },
) {
  const archived = await auth.archivedAccount(ctx.db, username);
  const source = file ?? archived?.file;
  if (source === undefined) throw new InvalidInput(`No archived account ${username}: name its archive file`);
  const text = await fs.readFile(source, 'utf8').catch((err: unknown) => {
    const how = { archived: archived !== undefined, named: file !== undefined };
    throw new InvalidInput(unreadable(username, source, why(err), how));
  });
  const archive = parseArchive(text);
  if (archive.user !== username) {
    throw new InvalidInput(`${source} is the archive of ${archive.user}, not of ${username}`);
  }
  const user = await auth.reviveUser(ctx, username);
  let summary: Summary;
  try {
    summary = await importArchive(ctx.db, user.userId, archive, { dryRun: false, progress, keep });
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new InvalidInput(`${reason}. The restore stopped part way: run it again to complete it`);
  }
  if (archived) await auth.forgetArchived(ctx, username);
  return { ...user, file: source, summary };
}

export const ARCHIVE_IDLE_TASK = 'archive_idle_accounts';

/**
 * With ARCHIVE_IDLE_AFTER_DAYS and ARCHIVE_DIR: every night, the users idle that many days archived into
 * that folder. A run that cannot write an archive stops, logs why, and is tried again the next night; one
 * that finds another run under way (the command, or this job run again after a restart) leaves it to that one.
 */
export function idleTasks({ db, logger, config }: { db: Db; logger: Logger; config: Config }): TaskList {
  const { archiveIdleAfterDays: days, archiveDir: dir } = config;
  if (days === undefined || dir === undefined) return { tasks: {} };
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
