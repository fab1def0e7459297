/**
 * What domain services throw when a request cannot be done. They carry no HTTP status: each adapter
 * (OPA, gpodder, the web page) maps them to its own protocol's answer.
 */
export class DomainError extends Error {}

/** The user has no such record (another user's record is not found either). */
export class NotFound extends DomainError {
  constructor() {
    super('not found');
  }
}

/** The record exists but was deleted. */
export class Deleted extends DomainError {
  constructor() {
    super('deleted');
  }
}

/** Input that breaks a domain rule; the reason is safe to show to the client. */
export class InvalidInput extends DomainError {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** Credentials that name no user or do not match: each door asks again in its own way. */
export class CredentialsRefused extends DomainError {
  constructor() {
    super('credentials refused');
  }
}

/** Too many refused credentials from one client for one name: refused whatever they are, for a while. */
export class TooManyFailures extends DomainError {
  constructor(readonly retryAfterSeconds: number) {
    super('too many failed attempts');
  }
  /** Whole seconds, at least 1, as a Retry-After header or a person reads them. */
  get retryAfter(): number {
    return Math.max(1, Math.ceil(this.retryAfterSeconds));
  }
}

/** A user id that names no user: a programming error (users are removed with all their data). */
export const missingUser = (userId: number): Error => new Error(`user ${userId} does not exist`);

/** Someone an identity provider or a trusted proxy vouches for, whom this server does not let in. */
export class SignInRefused extends DomainError {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/**
 * The credentials of an account that was archived after a long time without use (docs/idle-accounts.md):
 * refused, with how to bring it back. Only the account's own password or app password (or an identity
 * provider vouching for the person) learns this; other credentials are refused as for an unknown name.
 */
export class AccountArchived extends DomainError {
  constructor(
    readonly username: string,
    readonly archivedAt: Date,
  ) {
    super(
      `The account ${username} was archived on ${archivedAt.toISOString().slice(0, 10)} after a long time ` +
        "without use: its subscriptions and history are kept in a file. Ask this server's administrator to " +
        `bring it back (castsync users restore ${username}); then sign in again as before.`,
    );
  }
  get reason(): string {
    return this.message;
  }
}

/**
 * One item of a batch refused, and why: the one way every room and door says so (an episode a request
 * cannot name, a field it cannot read, an action a rule refuses). Not an error: the batch goes on with
 * its other items, and the door shows the reason in its protocol's shape.
 */
export class Refusal {
  constructor(readonly reason: string) {}
}

export const isRefusal = (x: unknown): x is Refusal => x instanceof Refusal;

/** A refused item of a batch, by its place in the batch. */
export type RefusedItem = { index: number; reason: string };
