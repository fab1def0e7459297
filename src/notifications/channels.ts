import type WebPush from 'web-push';
import { InvalidInput } from '../errors';
import { checkTarget, failure, readBody, send, type AddressPolicy } from '../feeds/service';
import { ntfyBody, pushBody, webhookBody, type Message } from './message';
import type { PushRow } from './push-repo';
import type { HookKind } from './settings';

// Where a message goes: a webhook (a JSON POST), an ntfy topic (ntfy's JSON publishing), or a browser's
// push service (Web Push, RFC 8030, its body encrypted by RFC 8291 and signed by VAPID, RFC 8292, with the
// web-push library). Every request goes to an address the fetcher's address policy allows, with no
// redirect followed, within the timeout.

export type Sending = { policy: AddressPolicy; timeoutMs: number };

/** What the other side answered: its status and the start of its body (for "Send a test"). */
export type Answer = { status: number; text: string };

const USER_AGENT = 'castsync (podcast sync server; notifications)';
/** Of an answer's body, this much is kept to show. */
const ANSWER_BYTES = 2000;

/**
 * The web-push library, loaded when the first message goes to a browser or the VAPID keys are made: it
 * takes memory from the moment it is loaded (about 10 MiB), which a server that sends none never needs.
 * By require: import() would not run under the tests' module registry.
 */
let webPushLoaded: typeof WebPush | undefined;
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const loadWebPush = (): typeof WebPush => (webPushLoaded ??= require('web-push') as typeof WebPush);

/** POSTs `body` to `url` under the policy; throws FetchFailed when no answer came. */
async function post(url: URL, headers: Record<string, string>, body: Buffer, s: Sending): Promise<Answer> {
  const deadline = AbortSignal.timeout(s.timeoutMs);
  try {
    checkTarget(url, s.policy);
    const all = { 'user-agent': USER_AGENT, 'content-length': String(body.length), ...headers };
    const res = await send(url, all, s.policy, deadline, 'POST', body);
    const text = await readBody(res, 64 * 1024).then(
      (b) => b.toString('utf8').slice(0, ANSWER_BYTES),
      () => '',
    );
    return { status: res.statusCode ?? 0, text };
  } catch (err) {
    throw failure(err, { deadline, timeoutMs: s.timeoutMs });
  }
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value));

/**
 * An ntfy topic URL split into ntfy's root (where JSON is published) and the topic (its last segment,
 * decoded). Throws InvalidInput for a topic that does not decode: the settings refuse such a URL with it.
 */
export function ntfyTarget(url: string): { root: URL; topic: string } {
  const u = new URL(url);
  const segments = u.pathname.split('/');
  let topic: string;
  try {
    topic = decodeURIComponent(segments.pop() ?? '');
  } catch {
    throw new InvalidInput("the ntfy topic (the URL's last segment) is not percent-encoded UTF-8");
  }
  u.pathname = `${segments.join('/')}/`;
  return { root: u, topic };
}

/** Sends a message to a person's URL, as a webhook or to ntfy. */
export function sendToHook(hook: { url: string; kind: HookKind }, m: Message, s: Sending): Promise<Answer> {
  const headers = { 'content-type': 'application/json', 'idempotency-key': m.id };
  if (hook.kind === 'ntfy') {
    const { root, topic } = ntfyTarget(hook.url);
    return post(root, headers, json(ntfyBody(m, topic)), s);
  }
  return post(new URL(hook.url), headers, json(webhookBody(m)), s);
}

export type Vapid = { subject: string; publicKey: string; privateKey: string };

/** Sends a message to a browser through its push service; 404 and 410 say the subscription is gone. */
export function sendToBrowser(browser: PushRow, m: Message, vapid: Vapid, s: Sending): Promise<Answer> {
  const webPush = loadWebPush();
  const details = webPush.generateRequestDetails(
    { endpoint: browser.endpoint, keys: { p256dh: browser.p256dh, auth: browser.auth } },
    JSON.stringify(pushBody(m)),
    { vapidDetails: vapid, TTL: 24 * 3600, urgency: 'normal', topic: undefined },
  );
  const headers = Object.fromEntries(Object.entries(details.headers).map(([k, v]) => [k.toLowerCase(), String(v)]));
  return post(new URL(details.endpoint), headers, details.body, s);
}

/** Whether an answer means the message was taken. */
export const accepted = (a: Answer): boolean => a.status >= 200 && a.status < 300;
/** Whether a push service's answer means the browser's subscription is gone (RFC 8030 §7.3: 404, 410). */
export const gone = (a: Answer): boolean => a.status === 404 || a.status === 410;
