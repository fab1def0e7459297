import type { Queryable } from '../db/pool';
import { AccountArchived, InvalidInput } from '../errors';
import * as repo from './idle-repo';
import { hashToken, looksLikeAppPassword, verifyPassword } from './secrets';

// What signing in needs to know of idle accounts (docs/idle-accounts.md): noting that a user is active,
// and answering the credentials of an archived account.

/** When this process last noted each user as seen. */
const noted = new Map<number, number>();
const NOTE_EVERY_MS = 3600_000;

/**
 * Notes that the user signed a request: at most one write an hour per user from each process. Noting never
 * refuses a request: a failure (the user removed at that moment) is let go.
 */
export async function noteSeen(db: Queryable, userId: number): Promise<void> {
  const now = Date.now();
  if (now - (noted.get(userId) ?? 0) < NOTE_EVERY_MS) return;
  if (noted.size >= 100_000) noted.clear();
  noted.set(userId, now);
  await repo.noteSeen(db, userId).catch(() => noted.delete(userId));
}

/**
 * For a name no user has: throws AccountArchived when it is an archived account's and the password is
 * that account's password (when passwords sign in) or one of its app passwords. Otherwise undefined, after
 * the same password hash as for any unknown name, so that the answer's time tells nothing.
 */
export async function refuseArchived(
  db: Queryable,
  username: string,
  password: string,
  { passwords }: { passwords: boolean },
): Promise<undefined> {
  const archived = await repo.findArchived(db, username);
  if (archived && looksLikeAppPassword(password)) {
    const app = await repo.findArchivedAppPassword(db, hashToken(password));
    if (app?.username === username) throw new AccountArchived(username, archived.archived_at);
  }
  if (passwords && (await verifyPassword(archived?.password_hash, password)) && archived) {
    throw new AccountArchived(username, archived.archived_at);
  }
  return undefined;
}

/** For a token no user has: throws AccountArchived when it is an archived account's app password. */
export async function refuseArchivedToken(db: Queryable, hash: Buffer): Promise<undefined> {
  const app = await repo.findArchivedAppPassword(db, hash);
  if (app) throw new AccountArchived(app.username, app.archived_at);
  return undefined;
}

/** Throws AccountArchived when the name is an archived account's (an identity provider vouched for the person). */
export async function refuseArchivedName(db: Queryable, username: string): Promise<void> {
  const archived = await repo.findArchived(db, username);
  if (archived) throw new AccountArchived(username, archived.archived_at);
}

/**
 * Throws AccountArchived when the person an identity provider vouches for is linked to an archived account
 * (whatever the provider calls them now): they are that account's, not a new user's.
 */
export async function refuseArchivedIdentity(db: Queryable, issuer: string, subject: string): Promise<void> {
  const archived = await repo.findArchivedIdentity(db, issuer, subject);
  if (archived) throw new AccountArchived(archived.username, archived.archived_at);
}

/** An archived account's name stays its own: no new user takes it while it may be restored. */
export async function checkNameFree(db: Queryable, username: string): Promise<void> {
  if (await repo.findArchived(db, username)) {
    throw new InvalidInput(
      `User ${username} already exists, archived (castsync users restore ${username} brings it back)`,
    );
  }
}
