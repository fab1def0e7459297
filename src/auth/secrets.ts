import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import argon2 from 'argon2';

/**
 * argon2id at one of the settings OWASP recommends (46 MiB, 1 pass, 1 lane; as strong as its 19 MiB,
 * 2-pass one): about 50 ms a hash here. Above glibc's 32 MiB mmap ceiling, each hash's memory goes back
 * to the system when it is done; at 19 MiB glibc keeps the freed block in each worker thread's arena,
 * which measured +80 MiB resident after 20 logins (bench/README.md).
 */
export const ARGON2_OPTIONS = { type: argon2.argon2id, memoryCost: 47_104, timeCost: 1, parallelism: 1 } as const;

export const hashPassword = (password: string): Promise<string> => argon2.hash(password, ARGON2_OPTIONS);

// Verified when the username is unknown (or has no password), so that the answer takes as long as for a
// known one.
let dummyHash: Promise<string> | undefined;

export async function verifyPassword(hash: string | null | undefined, password: string): Promise<boolean> {
  if (hash === undefined || hash === null) {
    dummyHash ??= hashPassword('castsync-dummy-password');
    await argon2.verify(await dummyHash, password).catch(() => false);
    return false;
  }
  return argon2.verify(hash, password).catch(() => false);
}

export type TokenKind = 'access' | 'refresh' | 'personal' | 'session' | 'web';
const PREFIX: Record<TokenKind, string> = {
  access: 'csa_',
  refresh: 'csr_',
  personal: 'csp_',
  session: 'css_',
  web: 'csw_',
};

/** A random value that is not a token (a login flow's poll token or code); only its digest is stored. */
export function newSecret(): { value: string; hash: Buffer } {
  const value = randomBytes(32).toString('base64url');
  return { value, hash: hashToken(value) };
}

/** A random token with a prefix that names its kind; only its SHA-256 is stored. */
export function newToken(kind: TokenKind): { token: string; hash: Buffer } {
  const token = PREFIX[kind] + randomBytes(32).toString('base64url');
  return { token, hash: hashToken(token) };
}

export const hashToken = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

export const looksLikeAppPassword = (s: string): boolean => s.startsWith(PREFIX.personal);

/** Constant-time comparison of two secrets' digests. */
export function sameSecret(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
