import type { Context } from '../context';
import { urlForLog } from '../logger';
import { jsonChapters, DocumentError, type Chapter } from './chapters';
import { answerRefusal, DOCUMENT_TYPES, keptFromRefused, NOT_HAD } from './document-policy';
import { fetchDocument, FetchFailed } from './fetch';
import { fetcherSettings } from './fetcher';
import * as repo from './documents-repo';
import { parseTranscript, type Cue } from './transcripts';

// An item's chapters and transcript, for the web player: fetched when first asked for, under the feed
// fetcher's address policy, redirect limit and deadline, with caps of their own on size and on how many
// are fetched at once and the rules of document-policy.ts (the types read, what a person is told, which
// kept copies a process serves); kept with the item, and served from castsync's own origin. docs/web.md.

/** Size caps: a chapters document is small; a transcript of a long episode with times is a few hundred KB. */
export const MAX_BYTES = { chapters: 512 * 1024, transcript: 2 * 1024 * 1024 };
/** A copy is fetched again after this long (a feed may correct its chapters), a failure sooner. */
const KEEP_MS = { content: 7 * 24 * 3600_000, error: 3600_000 };
/** Fetches under way at once in this process, and requests that may wait for one. */
const AT_ONCE = 4;
const MAY_WAIT = 100;

export type Chapters = { chapters: Chapter[]; error?: string };
export type Transcript = { cues: Cue[]; error?: string };

/** What a person is told when too many fetches wait: about castsync, not the document, and never kept. */
export const BUSY = 'too many documents are being fetched: try again in a moment';
export class Busy extends Error {}

let running = 0;
const waiting: (() => void)[] = [];
const underway = new Map<string, Promise<unknown>>();

/** Runs `work` when fewer than AT_ONCE fetches run; refused when too many already wait. */
export async function inTurn<T>(work: () => Promise<T>): Promise<T> {
  if (running >= AT_ONCE) {
    if (waiting.length >= MAY_WAIT) throw new Busy();
    await new Promise<void>((resolve) => waiting.push(resolve));
  }
  running++;
  try {
    return await work();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

/**
 * Whether the copy answers for `url` now: fetched from it, and not old. Content kept before the address it
 * came from was recorded does not: it is fetched again, so that the address can be checked.
 */
const fresh = (copy: repo.CopyRow, url: string) =>
  copy.source_url === url &&
  Date.now() - copy.fetched_at.getTime() < (copy.error ? KEEP_MS.error : KEEP_MS.content) &&
  (copy.error !== null || copy.source_address !== null);

/** The kind's types first; anything else last, so that a strict server answers rather than refuses (406). */
const ACCEPT = {
  chapters: `${DOCUMENT_TYPES.chapters.join(', ')}, */*;q=0.1`,
  transcript: `${DOCUMENT_TYPES.transcript.join(', ')}, */*;q=0.1`,
};

/** Fetches and reads the `kind` document at `url`: its content and the address it came from, or why not. */
async function fetchAndRead<T>(
  ctx: Context,
  kind: repo.DocumentKind,
  url: string,
  read: (body: string) => T,
): Promise<{ content: T; address: string } | { error: string }> {
  const s = fetcherSettings(ctx.config);
  try {
    const got = await inTurn(() =>
      fetchDocument(url, ACCEPT[kind], {
        policy: s.policy,
        limits: { ...s.limits, maxBytes: MAX_BYTES[kind] },
        admit: (answer) => answerRefusal(kind, answer),
      }),
    );
    if (got.address === undefined) throw new FetchFailed('the address the answer came from is not known');
    return { content: read(got.body.toString('utf8')), address: got.address };
  } catch (err) {
    if (!(err instanceof FetchFailed) && !(err instanceof DocumentError)) throw err;
    return { error: err.message };
  }
}

/**
 * The `kind` document at `url` for the item: the copy kept while fresh, else fetched, read and kept (the
 * outcome, a failure too, so that a broken address is not fetched on every request). One fetch per item
 * and kind at a time in this process. A failure is NOT_HAD to the person; why, only in the log. Too many
 * waiting is BUSY, and nothing is kept.
 */
async function document<T>(
  ctx: Context,
  itemId: string,
  kind: repo.DocumentKind,
  url: string,
  copy: repo.CopyRow | null,
  read: (body: string) => T,
): Promise<{ content: T } | { error: string }> {
  if (copy && fresh(copy, url)) {
    // Another process, with a wider policy, may have kept it: this one neither serves it nor fetches it.
    if (copy.error !== null || keptFromRefused(copy.source_address, fetcherSettings(ctx.config).policy))
      return { error: NOT_HAD };
    return { content: copy.content as T };
  }
  const key = `${itemId}:${kind}`;
  const pending = underway.get(key);
  if (pending) return pending as Promise<{ content: T } | { error: string }>;
  const fetching = (async () => {
    let outcome: Awaited<ReturnType<typeof fetchAndRead<T>>>;
    try {
      outcome = await fetchAndRead(ctx, kind, url, read);
    } catch (err) {
      if (err instanceof Busy) return { error: BUSY };
      throw err;
    }
    if ('error' in outcome)
      ctx.logger.info(
        { component: 'feeds', itemId, kind, url: urlForLog(url), reason: outcome.error },
        'item document not had',
      );
    await repo.saveCopy(ctx.db, itemId, kind, url, outcome);
    return 'error' in outcome ? { error: NOT_HAD } : { content: outcome.content };
  })();
  underway.set(key, fetching);
  try {
    return await fetching;
  } finally {
    underway.delete(key);
  }
}

/**
 * The item's chapters: its podcast:chapters document's, else (none, or it could not be had) the Podlove
 * chapters its feed gives inline; an empty list when it has none. `error` says why a document declared
 * could not be had.
 */
export async function chaptersOf(ctx: Context, itemId: string): Promise<Chapters> {
  const item = await repo.declared(ctx.db, itemId, 'chapters');
  const inline = item?.chapters ?? [];
  if (!item?.chapters_url) return { chapters: inline };
  const got = await document(ctx, itemId, 'chapters', item.chapters_url, item.copy, jsonChapters);
  if ('content' in got && got.content.length > 0) return { chapters: got.content };
  return inline.length > 0 ? { chapters: inline } : { chapters: [], ...('error' in got ? { error: got.error } : {}) };
}

/** The item's transcript as cues: empty when it names none; `error` says why one named could not be had. */
export async function transcriptOf(ctx: Context, itemId: string): Promise<Transcript> {
  const item = await repo.declared(ctx.db, itemId, 'transcript');
  if (!item?.transcript_url || !item.transcript_format) return { cues: [] };
  const format = item.transcript_format;
  const got = await document(ctx, itemId, 'transcript', item.transcript_url, item.copy, (body) =>
    parseTranscript(format, body),
  );
  return 'content' in got ? { cues: got.content } : { cues: [], error: got.error };
}

/** Whether the item declares chapters (a document or inline) and a transcript castsync can read. */
export async function declaredOf(ctx: Context, itemId: string): Promise<{ chapters: boolean; transcript: boolean }> {
  const item = await repo.declared(ctx.db, itemId, 'chapters');
  return {
    chapters: Boolean(item?.chapters_url || (item?.chapters?.length ?? 0) > 0),
    transcript: Boolean(item?.transcript_url && item.transcript_format),
  };
}
