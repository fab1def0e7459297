import { createHash, randomUUID } from 'node:crypto';
import type { Config } from '../config';
import { withTransaction, type Db, type Queryable } from '../db/pool';
import { InvalidInput } from '../errors';
import type { TaskList } from '../jobs/worker';
import type { Logger } from '../logger';
import type { AuthCache } from './cache';
import { checkNameFree, noteSeen, refuseArchived, refuseArchivedToken } from './idle';
import * as repo from './repo';
import {
  hashPassword,
  hashToken,
  looksLikeAppPassword,
  newSecret,
  newToken,
  sameSecret,
  verifyPassword,
  type TokenKind,
} from './secrets';

/**
 * What authentication needs: the database, the token lifetimes, whether account passwords sign in
 * (PASSWORD_LOGIN; app passwords always do), and the cache of verified credentials.
 */
export type AuthContext = Readonly<{
  db: Db;
  config: Pick<Config, 'accessTokenTtl' | 'refreshTokenTtl' | 'passwordLogin'>;
  authCache: AuthCache;
}>;
type Admin = Pick<AuthContext, 'db' | 'authCache'>;

export const USERNAME = /^[A-Za-z0-9._-]{1,64}$/;
export const MIN_PASSWORD = 8;

export function checkUsername(username: string): void {
  if (!USERNAME.test(username)) throw new InvalidInput('Usernames are 1-64 characters of A-Z a-z 0-9 . _ -');
}

export function checkNewCredentials(username: string, password: string): void {
  checkUsername(username);
  if (password.length < MIN_PASSWORD) throw new InvalidInput(`Passwords have at least ${MIN_PASSWORD} characters`);
}

const basicKey = (username: string, password: string) =>
  'b:' + createHash('sha256').update(`${username}\0${password}`, 'utf8').digest('base64');
// A token is remembered with the kinds it was accepted as: the one value is no key to another door (an
// app password is no browser session, a browser session no bearer token), even while it is cached.
const tokenKey = (hash: Buffer, kinds: TokenKind[]) => `t:${kinds.join(',')}:${hash.toString('base64')}`;

/**
 * The user of a live token of one of these kinds; undefined otherwise. An app password of an archived
 * account throws AccountArchived.
 */
function authenticateToken(ctx: AuthContext, token: string, kinds: TokenKind[]): Promise<number | undefined> {
  const hash = hashToken(token);
  return ctx.authCache.resolve(tokenKey(hash, kinds), async () => {
    const row = await repo.findLiveToken(ctx.db, hash);
    if (!row) return kinds.includes('personal') ? refuseArchivedToken(ctx.db, hash) : undefined;
    if (!kinds.includes(row.kind) || !sameSecret(row.token_hash, hash)) return undefined;
    await noteSeen(ctx.db, row.user_id);
    return { userId: row.user_id, notAfter: row.expires_at?.getTime() };
  });
}

/** The user of an app password or an unexpired access token; undefined otherwise. */
export const authenticateBearer = (ctx: AuthContext, token: string): Promise<number | undefined> =>
  authenticateToken(ctx, token, ['access', 'personal']);

/** The user of a browser session of the web page; undefined otherwise. */
export const authenticateBrowser = (ctx: AuthContext, token: string): Promise<number | undefined> =>
  authenticateToken(ctx, token, ['web']);

/** The user of a gpodder session (the sessionid cookie); undefined otherwise. */
export const authenticateSession = (ctx: AuthContext, token: string): Promise<number | undefined> =>
  authenticateToken(ctx, token, ['session']);

/**
 * HTTP Basic: the password is one of the user's app passwords, or (with PASSWORD_LOGIN) the user's
 * password. The credentials of an archived account throw AccountArchived.
 */
export function authenticateBasic(ctx: AuthContext, username: string, password: string): Promise<number | undefined> {
  return ctx.authCache.resolve(basicKey(username, password), async () => {
    // No user has a name outside the rule, and one with U+0000 cannot even be looked up: it is unknown.
    if (!USERNAME.test(username)) return undefined;
    const user = await repo.findUserByName(ctx.db, username);
    if (!user) return refuseArchived(ctx.db, username, password, { passwords: ctx.config.passwordLogin });
    const ok =
      (looksLikeAppPassword(password) && (await authenticateBearer(ctx, password)) === user.id) ||
      (ctx.config.passwordLogin && (await verifyPassword(user.password_hash, password)));
    if (!ok) return undefined;
    await noteSeen(ctx.db, user.id);
    return { userId: user.id };
  });
}

/** The tokens of a login session: a short-lived access token and the refresh token that renews it. */
export type Session = { accessToken: string; expiresIn: number; refreshToken: string; refreshExpires: Date };

async function issueSession(ctx: AuthContext, db: Queryable, userId: number, family: string): Promise<Session> {
  const now = Date.now();
  const access = newToken('access');
  const refresh = newToken('refresh');
  const refreshExpires = new Date(now + ctx.config.refreshTokenTtl * 1000);
  await repo.insertToken(db, {
    userId,
    kind: 'access',
    hash: access.hash,
    family,
    expiresAt: new Date(now + ctx.config.accessTokenTtl * 1000),
  });
  await repo.insertToken(db, { userId, kind: 'refresh', hash: refresh.hash, family, expiresAt: refreshExpires });
  return {
    accessToken: access.token,
    expiresIn: ctx.config.accessTokenTtl,
    refreshToken: refresh.token,
    refreshExpires,
  };
}

/** Checks a username and password; the user's id, or undefined (an archived account's: AccountArchived). */
export async function checkPassword(db: Queryable, username: string, password: string): Promise<number | undefined> {
  const user = await repo.findUserByName(db, username);
  if (!user) return refuseArchived(db, username, password, { passwords: true });
  return (await verifyPassword(user.password_hash, password)) ? user.id : undefined;
}

/**
 * A /v1 login's check of the account's password: the user's id, none when PASSWORD_LOGIN is false (apps use
 * app passwords). The session is opened apart (openLogin), once the door's failure limit has let the login
 * through: a login it refuses after the check (a burst of guesses blocked the name meanwhile) issues nothing.
 */
export const checkLogin = async (ctx: AuthContext, username: string, password: string): Promise<number | undefined> =>
  ctx.config.passwordLogin ? checkPassword(ctx.db, username, password) : undefined;

/** Opens a /v1 login session for a user whose password was checked (checkLogin). */
export const openLogin = (ctx: AuthContext, userId: number): Promise<Session> =>
  withTransaction(ctx.db, (tx) => issueSession(ctx, tx, userId, randomUUID()));

/**
 * Rotates a refresh token: the old one is spent, a new pair is issued in the same family. A refresh token
 * presented a second time means it leaked: the whole family (that login's tokens) is revoked.
 */
export async function refresh(ctx: AuthContext, refreshToken: string): Promise<Session | undefined> {
  const hash = hashToken(refreshToken);
  const row = await repo.findLiveToken(ctx.db, hash);
  if (!row || row.kind !== 'refresh' || !sameSecret(row.token_hash, hash) || !row.family) return undefined;
  const family = row.family;
  const session = await withTransaction(ctx.db, async (tx) => {
    if (!(await repo.useRefreshToken(tx, row.id))) return undefined;
    return issueSession(ctx, tx, row.user_id, family);
  });
  if (!session) {
    await repo.deleteFamily(ctx.db, row.user_id, family);
    await credentialsChanged(ctx);
  }
  return session;
}

/** Revokes the session of the given refresh token, or every session of the user. */
export async function logout(ctx: AuthContext, userId: number, refreshToken?: string): Promise<void> {
  if (refreshToken === undefined) {
    await repo.deleteTokensOfKinds(ctx.db, userId, ['access', 'refresh']);
  } else {
    const row = await repo.findLiveToken(ctx.db, hashToken(refreshToken));
    if (row && row.user_id === userId && row.family) await repo.deleteFamily(ctx.db, userId, row.family);
  }
  await credentialsChanged(ctx);
}

export async function credentialsChanged(ctx: Admin): Promise<void> {
  ctx.authCache.clear();
  await repo.announceCredentialChange(ctx.db);
}

// Administration (the CLI).

/** Creates a user; with a null password, one who signs in only with single sign-on (docs/sso.md). */
export async function addUser(
  ctx: Pick<AuthContext, 'db'>,
  username: string,
  password: string | null,
  { admin = false } = {},
): Promise<number> {
  if (password === null) checkUsername(username);
  else checkNewCredentials(username, password);
  if (await repo.findUserByName(ctx.db, username)) throw new InvalidInput(`User ${username} already exists`);
  await checkNameFree(ctx.db, username);
  return repo.insertUser(ctx.db, username, password === null ? null : await hashPassword(password), admin);
}

/** Every kind of session: browser sessions, gpodder sessions, and /v1 logins (access and refresh tokens). */
const SESSION_KINDS: TokenKind[] = ['web', 'session', 'access', 'refresh'];

/** What a password change ends besides the password: see `endSessions`. */
export type SignOut = { keep?: string; appPasswords?: boolean };

/**
 * Ends the user's sessions, all but the browser session with the cookie value `keep`; with `appPasswords`,
 * their app passwords too, and the login flows they allowed that no app has collected yet (each would
 * become an app password). Without a sign-out, the gpodder sessions only: they end at every password
 * change, as gpodder.net's do (an app with an app password signs in again by itself).
 */
async function endSessions(tx: Queryable, userId: number, signOut: SignOut | false): Promise<void> {
  if (!signOut) return repo.deleteTokensOfKinds(tx, userId, ['session']);
  const { keep, appPasswords = false } = signOut;
  const kinds: TokenKind[] = appPasswords ? [...SESSION_KINDS, 'personal'] : SESSION_KINDS;
  await repo.deleteTokensOfKinds(tx, userId, kinds, keep === undefined ? undefined : hashToken(keep));
  if (appPasswords) await repo.deleteLoginFlowsOf(tx, userId);
}

/**
 * Sets the user's password (checked against the rules first). The user's gpodder sessions end in the same
 * transaction, and with `signOut` the other sessions too (see `endSessions`); every process forgets the
 * credentials it had verified.
 */
export async function changePasswordOf(
  ctx: Admin,
  username: string,
  password: string,
  signOut: SignOut | false,
): Promise<void> {
  checkNewCredentials(username, password);
  const hash = await hashPassword(password);
  await withTransaction(ctx.db, async (tx) => {
    const id = await repo.updatePassword(tx, username, hash);
    if (id === undefined) throw new InvalidInput(`No user ${username}`);
    await endSessions(tx, id, signOut);
  });
  await credentialsChanged(ctx);
}

/**
 * A password set by an administrator (on the web page or with the CLI): every session of the user ends
 * (browser sessions, gpodder sessions, /v1 logins), since whoever opened them need not be the person;
 * but `keepSession`, the administrator's own browser session when they set their own password. App
 * passwords stay unless `revokeAppPasswords` (docs/operations.md).
 */
export const setPassword = (
  ctx: Admin,
  username: string,
  password: string,
  { revokeAppPasswords = false, keepSession }: { revokeAppPasswords?: boolean; keepSession?: string } = {},
): Promise<void> => changePasswordOf(ctx, username, password, { appPasswords: revokeAppPasswords, keep: keepSession });

export async function removeUser(ctx: Admin, username: string): Promise<void> {
  if (!(await repo.deleteUser(ctx.db, username))) throw new InvalidInput(`No user ${username}`);
  await credentialsChanged(ctx);
}

export async function createAppPasswordFor(
  ctx: Pick<AuthContext, 'db'>,
  username: string,
  label?: string,
): Promise<{ id: number; token: string }> {
  const user = await repo.findUserByName(ctx.db, username);
  if (!user) throw new InvalidInput(`No user ${username}`);
  const t = newToken('personal');
  const id = await repo.insertToken(ctx.db, { userId: user.id, kind: 'personal', hash: t.hash, label });
  return { id, token: t.token };
}

export async function revokeAppPasswordById(ctx: Admin, id: number): Promise<void> {
  if (!(await repo.deleteAppPassword(ctx.db, id))) throw new InvalidInput(`No app password ${id}`);
  await credentialsChanged(ctx);
}

export const listUsers = (db: Queryable) => repo.listUsers(db);

export const userIdOf = async (db: Queryable, username: string): Promise<number | undefined> =>
  (await repo.findUserByName(db, username))?.id;

export const usernameOf = (db: Queryable, userId: number): Promise<string | undefined> => repo.findUsername(db, userId);

// Sessions: the gpodder API's sessionid cookie, and the /v1 logins.

/** A gpodder session lasts a year, as on gpodder.net; a user keeps the newest SESSIONS_KEPT of them. */
export const SESSION_TTL_SECONDS = 365 * 24 * 3600;
const SESSIONS_KEPT = 100;

/**
 * Opens a cookie session for the user: a gpodder session, or (kind 'web') a browser session of the web
 * page. Returns the cookie's value (only its digest is stored).
 */
export async function openSession(
  db: Queryable,
  userId: number,
  label: string | undefined,
  { kind = 'session', ttlSeconds = SESSION_TTL_SECONDS }: { kind?: 'session' | 'web'; ttlSeconds?: number } = {},
): Promise<string> {
  const t = newToken(kind);
  const expiresAt = new Date(Date.now() + ttlSeconds * 1000);
  await repo.insertToken(db, { userId, kind, hash: t.hash, label: label?.slice(0, 200), expiresAt });
  return t.token;
}

/**
 * Opens the gpodder session an HTTP Basic sign-in of the user gets. One opened with an app password names
 * it and ends with it: AntennaPod sends Basic only to log in, then the cookie, so revoking the app password
 * must end that session too. Undefined when the credentials are no longer good (an app password revoked
 * since they were verified).
 */
export async function openBasicSession(
  ctx: AuthContext,
  userId: number,
  { username, password }: { username: string; password: string },
  label: string | undefined,
): Promise<string | undefined> {
  const t = newToken('session');
  const session = {
    userId,
    kind: 'session' as const,
    hash: t.hash,
    label: label?.slice(0, 200),
    expiresAt: new Date(Date.now() + SESSION_TTL_SECONDS * 1000),
  };
  if (looksLikeAppPassword(password)) {
    if (await repo.insertSessionOfAppPassword(ctx.db, session, hashToken(password))) return t.token;
    // No such app password: it was revoked a moment ago, or the account's password merely looks like one.
    const user = await repo.findUserByName(ctx.db, username);
    const isPassword = ctx.config.passwordLogin && user?.id === userId;
    if (!isPassword || !(await verifyPassword(user.password_hash, password))) return undefined;
  }
  await repo.insertToken(ctx.db, session);
  return t.token;
}

/** Ends the cookie session (gpodder, or with kind 'web' the web page's) with this value, if there is one. */
export async function closeSession(ctx: Admin, token: string, kind: 'session' | 'web' = 'session'): Promise<void> {
  await repo.deleteTokenByHash(ctx.db, hashToken(token), kind);
  await credentialsChanged(ctx);
}

export type SessionInfo = {
  id: number;
  kind: 'gpodder' | 'login' | 'browser';
  label: string | null;
  createdAt: Date;
  expiresAt: Date | null;
};

export async function listSessions(db: Queryable, userId: number): Promise<SessionInfo[]> {
  const rows = await repo.listSessions(db, userId);
  return rows.map((r) => ({
    id: r.id,
    kind: r.kind === 'session' ? 'gpodder' : r.kind === 'web' ? 'browser' : 'login',
    label: r.label,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
  }));
}

/** Revokes one of the user's sessions (a login: all of its tokens); false if the user has no such session. */
export async function revokeSession(ctx: Admin, userId: number, id: number): Promise<boolean> {
  const row = await repo.findToken(ctx.db, userId, id);
  if (!row || (row.kind !== 'session' && row.kind !== 'refresh' && row.kind !== 'web')) return false;
  if (row.kind === 'refresh' && row.family) await repo.deleteFamily(ctx.db, userId, row.family);
  else await repo.deleteToken(ctx.db, userId, id, ['session', 'refresh', 'web']);
  await credentialsChanged(ctx);
  return true;
}

// Nextcloud login flow v2.

/** How long an app may wait for its flow's approval. */
export const LOGIN_FLOW_TTL_SECONDS = 20 * 60;

/** Starts a flow for an app: the token the app polls with, and the code the approval page is named by. */
export async function startLoginFlow(db: Queryable, appName: string): Promise<{ pollToken: string; code: string }> {
  const poll = newSecret();
  const code = newSecret();
  await repo.insertLoginFlow(db, poll.hash, code.hash, appName.slice(0, 200) || 'an app');
  return { pollToken: poll.value, code: code.value };
}

/** The app that asks, while the flow can still be approved. */
export const pendingLoginFlow = (db: Queryable, code: string): Promise<string | undefined> =>
  repo.findPendingLoginFlow(db, hashToken(code), LOGIN_FLOW_TTL_SECONDS);

/** The user allows the app in: false when the flow is unknown, expired or already approved. */
export const approveLoginFlow = (db: Queryable, code: string, userId: number): Promise<boolean> =>
  repo.approveLoginFlow(db, hashToken(code), userId, LOGIN_FLOW_TTL_SECONDS);

/**
 * What the app's poll gets once the flow is approved, and only once: the user's name and a new app
 * password (labelled with the app's name). Undefined before approval, after
 * expiry, and after the first successful poll.
 */
export async function pollLoginFlow(
  db: Db,
  pollToken: string,
): Promise<{ loginName: string; appPassword: string } | undefined> {
  return withTransaction(db, async (tx) => {
    const flow = await repo.useLoginFlow(tx, hashToken(pollToken), LOGIN_FLOW_TTL_SECONDS);
    if (!flow) return undefined;
    const t = newToken('personal');
    await repo.insertToken(tx, { userId: flow.user_id, kind: 'personal', hash: t.hash, label: flow.app_name });
    return { loginName: flow.username, appPassword: t.token };
  });
}

/**
 * Expired tokens and login flows are removed hourly, and each user's gpodder sessions trimmed. What is
 * removed is announced like any credential change: a trimmed session may be cached as valid, and handed
 * out again to the credentials it was given to.
 */
export const authTasks = (db: Db, logger: Logger): TaskList => ({
  tasks: {
    cleanup_tokens: async () => {
      const n = (await repo.deleteExpiredTokens(db)) + (await repo.trimSessions(db, SESSIONS_KEPT));
      await repo.deleteOldLoginFlows(db, LOGIN_FLOW_TTL_SECONDS);
      if (n > 0) {
        await repo.announceCredentialChange(db);
        logger.info({ tokens: n }, 'expired tokens removed');
      }
    },
  },
  crontab: ['0 * * * * cleanup_tokens'],
});
