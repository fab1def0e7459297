import crypto from 'node:crypto';
import type { Queryable } from '../db/pool';
import { InvalidInput } from '../errors';
import type { AddressPolicy } from '../feeds/service';
import { loadWebPush, type Vapid } from './channels';
import * as repo from './push-repo';
import { checkHookUrl } from './settings';

// Web Push: the server's VAPID key pair, made once and kept in the database (so a backup holds it, and
// every instance signs with the same one), and each person's browsers' subscriptions.

/** The server's VAPID public key (base64url), made the first time it is asked for. */
export async function vapidPublicKey(db: Queryable): Promise<string> {
  return (await vapidKeys(db)).public_key;
}

async function vapidKeys(db: Queryable): Promise<repo.KeyRow> {
  const kept = await repo.keys(db);
  if (kept) return kept;
  const made = loadWebPush().generateVAPIDKeys();
  return repo.keepKeys(db, { public_key: made.publicKey, private_key: made.privateKey });
}

/** What VAPID signs with: the key pair and the subject push services may write to. */
export async function vapid(db: Queryable, subject: string): Promise<Vapid> {
  const k = await vapidKeys(db);
  return { subject, publicKey: k.public_key, privateKey: k.private_key };
}

/** The subject of VAPID's claims: the configured one, else PUBLIC_URL when https, else a placeholder. */
export const vapidSubject = (configured: string | undefined, publicUrl: string | undefined): string =>
  configured ?? (publicUrl?.startsWith('https://') ? publicUrl : 'mailto:castsync@localhost.invalid');

export type BrowserSubscription = { endpoint: string; keys: { p256dh: string; auth: string } };

/**
 * The most browsers a person keeps: each message goes to every one, so without a bound one person's
 * messages (NOTIFY_DAILY_LIMIT a day) could be any number of requests. A browser added past it makes the
 * oldest one forgotten (a browser reinstalled or reset has a new subscription, and its old one stays until
 * a push service answers 410 for it).
 */
export const MAX_BROWSERS = 20;

const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;

/** A key of a browser's subscription: base64url of `bytes` bytes. */
function checkKey(value: unknown, name: string, bytes: number): string {
  const ok = typeof value === 'string' && BASE64URL.test(value) && Buffer.from(value, 'base64url').length === bytes;
  if (!ok) throw new InvalidInput(`keys.${name} must be base64url of ${bytes} bytes`);
  return value as string;
}

/**
 * Whether a browser's key is a P-256 point in the uncompressed form RFC 8291 §3.1 asks for. web-push agrees
 * a secret with it for every message, and throws for one that is not on the curve.
 */
function onCurve(key: Buffer): boolean {
  if (key[0] !== 0x04) return false;
  try {
    crypto.ECDH.convertKey(key, 'prime256v1');
    return true;
  } catch {
    return false;
  }
}

/**
 * Keeps a browser's subscription (PushSubscription.toJSON()): its endpoint under the address policy, its
 * keys as RFC 8291 gives them (a P-256 point, 65 bytes; a 16-byte secret). Returns its id.
 */
export async function addBrowser(
  db: Queryable,
  userId: number,
  s: BrowserSubscription,
  policy: AddressPolicy,
  session: number | null = null,
): Promise<string> {
  const endpoint = checkHookUrl(String(s.endpoint), policy);
  const p256dh = checkKey(s.keys?.p256dh, 'p256dh', 65);
  if (!onCurve(Buffer.from(p256dh, 'base64url'))) throw new InvalidInput('keys.p256dh must be a point on P-256');
  const auth = checkKey(s.keys?.auth, 'auth', 16);
  return repo.addSubscription(db, userId, { endpoint, p256dh, auth, session }, MAX_BROWSERS);
}

/** Forgets a browser's subscription by its endpoint (the browser unsubscribed); whether there was one. */
export const removeBrowser = (db: Queryable, userId: number, endpoint: string): Promise<boolean> =>
  repo.removeSubscription(db, userId, { endpoint });

/**
 * Forgets the browsers that turned notifications on in this web session (the id addBrowser was given), as the person signs out of it: a shared computer shows none of their new episodes
 * afterwards. A session that runs out keeps its browsers: the web app on a phone is seldom opened.
 */
export const removeSessionBrowsers = (db: Queryable, userId: number, session: number): Promise<number> =>
  repo.removeSessionSubscriptions(db, userId, session);

/** How many browsers the person has subscribed. */
export async function browserCount(db: Queryable, userId: number): Promise<number> {
  return (await repo.subscriptions(db, userId)).length;
}
