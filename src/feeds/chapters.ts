import { cleanText } from '../text';

// Chapters as castsync keeps and serves them, read from a feed's Podlove Simple Chapters (inline) or from
// a podcast:chapters JSON document. Whatever the source, the result is a short list in time order of
// plain text titles and web links: nothing of a third party's markup reaches the page.

export type Chapter = { start: number; title: string; url: string | null };

/** At most this many chapters of an episode are kept. */
export const MAX_CHAPTERS = 500;
const MAX_TITLE = 300;
/** No episode is longer than a few days: a start beyond this is a mistake, not a chapter. */
const MAX_SECONDS = 10_000_000;

/** An http(s) URL, or null: the only links a feed's text may carry onto the page. */
export function webUrl(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 2048) return null;
  try {
    const u = new URL(value.trim());
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
  } catch {
    return null;
  }
}

/** A title: cleaned of what cannot be stored, whitespace collapsed, capped. */
export function plainTitle(value: unknown, max = MAX_TITLE): string {
  if (typeof value !== 'string') return '';
  return cleanText(cleanText(value).replace(/\s+/g, ' ').trim().slice(0, max));
}

/**
 * A time as Podlove's normal play time writes it ("HH:MM:SS.mmm", "MM:SS", "SS", fractions optional), or
 * as WebVTT and SRT do (a comma before the milliseconds too): seconds, or null.
 */
export function clockTime(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const m = /^\s*(?:(?:(\d{1,4}):)?(\d{1,2}):)?(\d{1,7})(?:[.,](\d{1,3}))?\s*$/.exec(value);
  if (!m) return null;
  const [, h, min, s, frac] = m;
  const seconds = Number(h ?? 0) * 3600 + Number(min ?? 0) * 60 + Number(s) + Number(`0.${frac ?? 0}`);
  return seconds <= MAX_SECONDS ? seconds : null;
}

/** Chapters in time order, one per start, at most MAX_CHAPTERS. */
function ordered(chapters: Chapter[]): Chapter[] {
  const seen = new Set<number>();
  return chapters
    .sort((a, b) => a.start - b.start)
    .filter((c) => !seen.has(c.start) && seen.add(c.start))
    .slice(0, MAX_CHAPTERS);
}

/** Podlove Simple Chapters: the attributes of each `psc:chapter` element (start, title, href). */
export function podloveChapters(elements: Record<string, unknown>[]): Chapter[] | null {
  const chapters: Chapter[] = [];
  for (const el of elements.slice(0, MAX_CHAPTERS * 2)) {
    const start = clockTime(el['@start']);
    if (start === null) continue;
    chapters.push({ start, title: plainTitle(el['@title']), url: webUrl(el['@href']) });
  }
  return chapters.length > 0 ? ordered(chapters) : null;
}

export class DocumentError extends Error {}

/** The list under `key` of a JSON document's top object; a document that has none is refused. */
export function jsonList(body: string, key: string): unknown[] {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    throw new DocumentError('not JSON');
  }
  const list = (doc as Record<string, unknown> | null)?.[key];
  if (!Array.isArray(list)) throw new DocumentError(`no "${key}" list`);
  return list;
}

/**
 * A podcast:chapters document (JSON Chapters: `{"version": …, "chapters": [{"startTime": …, "title": …,
 * "url": …, "toc": …}]}`); chapters marked `"toc": false` are not for the list and are left out.
 */
export function jsonChapters(body: string): Chapter[] {
  const chapters: Chapter[] = [];
  for (const c of jsonList(body, 'chapters').slice(0, MAX_CHAPTERS * 2)) {
    if (c === null || typeof c !== 'object') continue;
    const { startTime, title, url, toc } = c as Record<string, unknown>;
    if (typeof startTime !== 'number' || !Number.isFinite(startTime) || startTime < 0 || startTime > MAX_SECONDS)
      continue;
    if (toc === false) continue;
    chapters.push({ start: startTime, title: plainTitle(title), url: webUrl(url) });
  }
  return ordered(chapters);
}
