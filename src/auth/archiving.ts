import { withTransaction, type Queryable } from '../db/pool';
import { InvalidInput } from '../errors';
import * as repo from './idle-repo';
import { findUserByName, insertUser } from './repo';
import { checkUsername, credentialsChanged, type AuthContext } from './credentials';

// The administration of idle accounts (docs/idle-accounts.md): who is idle, and the archived account that
// stays when an idle user is removed, until the restore brings the user back.

type Admin = Pick<AuthContext, 'db' | 'authCache'>;

/** An idle user: when last active, and the change stamp its archive must still find. */
export type Idle = { userId: number; username: string; lastChange: Date; lastActive: Date };

/** `file`: a copy of the archive written to a file (the only copy for an account an earlier release archived). */
export type ArchivedAccount = {
  username: string;
  archivedAt: Date;
  lastActive: Date;
  file: string | null;
  inDatabase: boolean;
};

/**
 * An idle user's archive as the archived account keeps it (`archive`, compressed; `file`, a copy's file if
 * one was written), and the check of what the database holds once it is written: throwing, it removes nothing.
 */
export type Kept = { archive: Buffer; file: string | null; readBack: (stored: Buffer) => Promise<void> };

/** The users last active before `before`, by name (docs/idle-accounts.md says what counts as active). */
export const idleUsers = async (db: Queryable, before: Date): Promise<Idle[]> =>
  (await repo.idleUsers(db, before)).map((r) => ({
    userId: r.id,
    username: r.username,
    lastChange: r.last_change,
    lastActive: r.last_active,
  }));

/**
 * Removes an idle user, leaving the archived account behind with their archive, in one transaction that
 * reads the archive back as the database holds it (`kept.readBack`) before it commits: only if the user is
 * still as the archive found them (no change since `lastChange`, no activity since `before`). False when
 * they are not: nothing was removed.
 */
export async function archiveUser(ctx: Admin, idle: Idle, before: Date, kept: Kept): Promise<boolean> {
  const still = { lastChange: idle.lastChange, before };
  const done = await withTransaction(ctx.db, async (tx) => {
    if (!(await repo.archiveUser(tx, idle.username, still, kept))) return false;
    await kept.readBack((await repo.storedArchive(tx, idle.username)) ?? Buffer.alloc(0));
    return true;
  });
  if (done) await credentialsChanged(ctx);
  return done;
}

/** The archive an archived account keeps in the database (compressed), if it keeps one. */
export const storedArchive = (db: Queryable, username: string): Promise<Buffer | undefined> =>
  repo.storedArchive(db, username);

const accountOf = (r: repo.ArchivedRow): ArchivedAccount => ({
  username: r.username,
  archivedAt: r.archived_at,
  lastActive: r.last_active,
  file: r.file,
  inDatabase: r.in_database,
});

export async function archivedAccount(db: Queryable, username: string): Promise<ArchivedAccount | undefined> {
  const row = await repo.findArchived(db, username);
  return row && accountOf(row);
}

export const archivedAccounts = async (db: Queryable): Promise<ArchivedAccount[]> =>
  (await repo.listArchived(db)).map(accountOf);

/**
 * The user a restore brings an archive into. `revived`: made again from the archived account, with its
 * password, role, app passwords and identity links; `resumed`: a restore that stopped before it was done
 * (the user is back, the archived account still there); `new`: no archived account, so a user without a
 * password (the administrator sets one). A user of that name who is not archived is refused: an archive is
 * brought into an existing user with `import archive`.
 */
export async function reviveUser(
  ctx: Admin,
  username: string,
): Promise<{ userId: number; how: 'revived' | 'resumed' | 'new'; hasPassword: boolean; appPasswords: number }> {
  checkUsername(username);
  const archived = await repo.findArchived(ctx.db, username);
  const existing = await findUserByName(ctx.db, username);
  if (existing) {
    if (!archived) {
      throw new InvalidInput(
        `User ${username} exists and is not archived: bring an archive into it with castsync import archive FILE ${username}`,
      );
    }
    return { userId: existing.id, how: 'resumed', hasPassword: existing.password_hash !== null, appPasswords: 0 };
  }
  if (!archived) {
    return { userId: await insertUser(ctx.db, username, null), how: 'new', hasPassword: false, appPasswords: 0 };
  }
  const made = await repo.reviveUser(ctx.db, username);
  if (!made) throw new InvalidInput(`User ${username} was made again meanwhile: run the restore again`);
  await credentialsChanged(ctx);
  return { userId: made.id, how: 'revived', hasPassword: made.has_password, appPasswords: made.app_passwords };
}

/** Forgets an archived account, and the archive it keeps in the database: its name is free again. */
export async function forgetArchived(ctx: Admin, username: string): Promise<void> {
  if (!(await repo.deleteArchived(ctx.db, username))) throw new InvalidInput(`No archived account ${username}`);
  await credentialsChanged(ctx);
}
