import { withTransaction, type Db } from '../db/pool';
import { SignInRefused } from '../errors';
import { refuseArchivedIdentity, refuseArchivedName } from './idle';
import * as repo from './identities-repo';
import { findUserByName } from './repo';
import { USERNAME } from './credentials';

// Single sign-on: the user a person is, when an OpenID provider or a trusted proxy vouches for them
// (docs/sso.md). The web page's two ways in call this; the apps never do (they use app passwords).

/** Who the provider or the proxy says the person is. */
export type Vouched = {
  /** The castsync username: the provider's name claim, or the proxy's header. */
  username: string;
  /** The OpenID provider and its stable subject for the person; absent for a trusted proxy's header. */
  provider?: { issuer: string; subject: string };
  /** Whether the provider's groups make the person an administrator; absent: the role is left as it is. */
  admin?: boolean;
};

export type SignInPolicy = { createUsers: boolean };

/**
 * The user the person signs in as. A provider's person is found by subject first, so a renamed person
 * stays the same user; the first time, by name, and linked. A user already linked to another person at
 * the same provider is refused, and an unknown name is created only when the policy says so.
 */
export async function signInVouched(db: Db, who: Vouched, policy: SignInPolicy): Promise<number> {
  return withTransaction(db, async (tx) => {
    const { provider } = who;
    let userId = provider && (await repo.findLinkedUser(tx, provider.issuer, provider.subject));
    if (userId === undefined) {
      if (provider) await refuseArchivedIdentity(tx, provider.issuer, provider.subject);
      // Before the name is looked up: no user has such a name, and one the database cannot hold (U+0000)
      // fails its query.
      if (!USERNAME.test(who.username)) {
        throw new SignInRefused(
          `You are known as "${who.username}", which is not a castsync username (1-64 characters of ` +
            'A-Z a-z 0-9 . _ -): the administrator can choose another claim or header that names you.',
        );
      }
      userId = (await findUserByName(tx, who.username))?.id;
      if (userId === undefined) {
        await refuseArchivedName(tx, who.username);
        if (!policy.createUsers) {
          throw new SignInRefused(
            `There is no castsync user ${who.username}, and this server does not create users at sign-in: ` +
              'ask its administrator to create yours.',
          );
        }
        userId = await repo.ensureUser(tx, who.username);
      }
      if (provider) {
        if ((await repo.linkedSubject(tx, userId, provider.issuer)) !== undefined) {
          throw new SignInRefused(
            `The castsync user ${who.username} belongs to another person at this identity provider: ` +
              'ask the administrator.',
          );
        }
        if (!(await repo.link(tx, userId, provider.issuer, provider.subject))) {
          throw new SignInRefused(
            `Another sign-in linked the castsync user ${who.username}, or you, at the same moment: sign in again.`,
          );
        }
      }
    }
    if (who.admin !== undefined) await repo.setAdmin(tx, userId, who.admin);
    return userId;
  });
}
