// The auth service, one seam for every door and the rooms above: what they may call, by name.
// Credentials and tokens, users, sessions and the login flow (credentials.ts); what the web page does with
// accounts (accounts.ts); idle and archived accounts (archiving.ts); single sign-on (identities.ts); the
// cache of verified credentials (cache.ts). The files behind it import each other, never this one; what is
// not named here (secrets, repos, the idle bookkeeping of idle.ts) stays inside the room.
export {
  BROWSER_SESSION_TTL_SECONDS,
  account,
  browserSessionId,
  changePassword,
  closeBrowserSession,
  createAppPassword,
  listAppPasswords,
  openBrowserSession,
  revokeAppPassword,
  setAdmin,
  setTheme,
  THEMES,
} from './accounts';
export type { Account, AppPassword, Theme } from './accounts';
export {
  archiveUser,
  archivedAccount,
  archivedAccounts,
  forgetArchived,
  idleUsers,
  reviveUser,
  storedArchive,
} from './archiving';
export type { ArchivedAccount, Idle, Kept } from './archiving';
export { AuthCache, credentialChanges } from './cache';
export {
  SESSION_TTL_SECONDS,
  addUser,
  approveLoginFlow,
  authTasks,
  authenticateBasic,
  authenticateBearer,
  authenticateBrowser,
  authenticateSession,
  closeSession,
  createAppPasswordFor,
  listSessions,
  checkLogin,
  checkPassword,
  listUsers,
  logout,
  openLogin,
  openBasicSession,
  openSession,
  pendingLoginFlow,
  pollLoginFlow,
  refresh,
  removeUser,
  revokeAppPasswordById,
  revokeSession,
  setPassword,
  startLoginFlow,
  userIdOf,
  usernameOf,
} from './credentials';
export type { AuthContext, Session, SessionInfo } from './credentials';
export { signInVouched } from './identities';
export type { SignInPolicy, Vouched } from './identities';
