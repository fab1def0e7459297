import type { Queryable } from '../db/pool';
import { InvalidInput } from '../errors';
import * as repo from './repo';
import * as accounts from './accounts-repo';
import { hashToken, newToken } from './secrets';
import {
  changePasswordOf,
  checkPassword,
  closeSession,
  credentialsChanged,
  openSession,
  type AuthContext,
} from './credentials';

// What the web page does with accounts: browser sessions, one's own password and app passwords, and the
// administration of users by an administrator.

type Admin = Pick<AuthContext, 'db' | 'authCache'>;
/** A user as the web page shows them; `hasPassword` is false for one who signs in only with single sign-on. */
export type Account = { id: number; username: string; isAdmin: boolean; hasPassword: boolean; theme: Theme };

/** The web page's colours: the browser's light or dark preference ('system'), or always light or dark. */
export const THEMES = ['system', 'light', 'dark'] as const;
export type Theme = (typeof THEMES)[number];
const isTheme = (t: string): t is Theme => (THEMES as readonly string[]).includes(t);

/** A browser session lasts 30 days; signing out or revoking it in the session list ends it sooner. */
export const BROWSER_SESSION_TTL_SECONDS = 30 * 24 * 3600;

export async function account(db: Queryable, userId: number): Promise<Account | undefined> {
  const row = await accounts.findAccount(db, userId);
  return (
    row && {
      id: row.id,
      username: row.username,
      isAdmin: row.is_admin,
      hasPassword: row.has_password,
      theme: isTheme(row.web_theme) ? row.web_theme : 'system',
    }
  );
}

/** Keeps the user's choice of the web page's colours (one of THEMES), else an InvalidInput. */
export async function setTheme(db: Queryable, userId: number, theme: string): Promise<void> {
  if (!isTheme(theme)) throw new InvalidInput(`theme: one of ${THEMES.join(', ')}`);
  await accounts.setTheme(db, userId, theme);
}

/** Opens a browser session: the cookie's value (only its digest is stored). */
export const openBrowserSession = (db: Queryable, userId: number, label: string | undefined): Promise<string> =>
  openSession(db, userId, label, { kind: 'web', ttlSeconds: BROWSER_SESSION_TTL_SECONDS });

export const closeBrowserSession = (ctx: Admin, token: string): Promise<void> => closeSession(ctx, token, 'web');

/**
 * How a door runs a check of credentials under its limit of failed sign-ins (src/http/limits.ts): the
 * user's id, or else (the check gave undefined) the error `refused` makes.
 */
export type Limited = (check: () => Promise<number | undefined>, refused: () => Error) => Promise<number>;

/**
 * Changes the user's own password, given the current one, checked under `limited`: whoever holds a
 * signed-in browser could otherwise guess the password there without limit. The user's gpodder sessions
 * end, as at every password change; with `signOutElsewhere` (the Account page's "sign out everywhere
 * else"), every other session of the user too: browser sessions but `keepSession` (the one in use) and
 * /v1 logins. App passwords stay either way: the apps that use them sign in again by themselves, and each
 * is revoked on the App passwords page.
 */
export async function changePassword(
  ctx: Admin,
  userId: number,
  { current, next, keepSession, signOutElsewhere }: PasswordChange,
  limited: Limited,
): Promise<void> {
  const wrong = () => new InvalidInput('The current password is wrong');
  const user = await accounts.findAccount(ctx.db, userId);
  if (!user) throw wrong();
  await limited(
    async () => ((await checkPassword(ctx.db, user.username, current)) === userId ? userId : undefined),
    wrong,
  );
  await changePasswordOf(ctx, user.username, next, signOutElsewhere && { keep: keepSession });
}

export type PasswordChange = { current: string; next: string; keepSession: string; signOutElsewhere: boolean };

export type AppPassword = { id: number; label: string | null; createdAt: Date };

export const listAppPasswords = async (db: Queryable, userId: number): Promise<AppPassword[]> =>
  (await accounts.listAppPasswords(db, userId)).map((r) => ({ id: r.id, label: r.label, createdAt: r.created_at }));

/** A new app password (a personal access token) for the user: its value, shown once. */
export async function createAppPassword(db: Queryable, userId: number, label: string): Promise<string> {
  const t = newToken('personal');
  await repo.insertToken(db, { userId, kind: 'personal', hash: t.hash, label: label.slice(0, 200) || undefined });
  return t.token;
}

export async function revokeAppPassword(ctx: Admin, userId: number, id: number): Promise<boolean> {
  const done = await repo.deleteToken(ctx.db, userId, id, ['personal']);
  if (done) await credentialsChanged(ctx);
  return done;
}

/** Makes a user an administrator of the web page, or not; false when there is no such user. */
export const setAdmin = (db: Queryable, username: string, admin: boolean): Promise<boolean> =>
  accounts.setAdmin(db, username, admin);

/** The id of the browser session with this cookie value (to mark it in the session list). */
export const browserSessionId = async (db: Queryable, token: string): Promise<number | undefined> => {
  const row = await repo.findLiveToken(db, hashToken(token));
  return row?.kind === 'web' ? row.id : undefined;
};
