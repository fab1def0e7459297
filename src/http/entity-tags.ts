import type { Request } from 'express';

// Entity tags in conditional requests (RFC 9110 §8.8.3, §13.1.1, §13.1.2): the one reading of If-Match and
// If-None-Match for every door.

export type EntityTag = { weak: boolean; /** The opaque tag, its quotes included: `"7"`. */ opaque: string };

/**
 * One member of the list: an entity tag and the comma after it, or, when it is not one, everything up to
 * the next comma (skipped: it names nothing). A tag may hold commas, so the list is not split on them.
 */
const MEMBER = /[\s,]*(?:(W\/)?("[\x21\x23-\x7e\x80-\xff]*")[ \t]*(?:,|$)|[^,]*,?)/y;

/** The entity tags of an If-Match or If-None-Match value: `*`, a list (maybe empty), or undefined when none was sent. */
export function entityTags(header: string | undefined): '*' | EntityTag[] | undefined {
  if (header === undefined) return undefined;
  if (header.trim() === '*') return '*';
  const tags: EntityTag[] = [];
  MEMBER.lastIndex = 0;
  while (MEMBER.lastIndex < header.length) {
    const m = MEMBER.exec(header);
    if (!m || m[0] === '') break;
    if (m[2] !== undefined) tags.push({ weak: m[1] !== undefined, opaque: m[2] });
  }
  return tags;
}

/**
 * Whether a GET's If-None-Match names the answer whose ETag is `etag`, by the weak comparison (`W/"7"` is
 * `"7"`), or is `*`: then the answer is a 304. Evaluated whatever the request's Cache-Control says, which is
 * for caches, not for the server.
 */
export function notModified(req: Request, etag: string): boolean {
  const tags = entityTags(req.headers['if-none-match']);
  if (tags === undefined) return false;
  const opaque = etag.replace(/^W\//, '');
  return tags === '*' || tags.some((t) => t.opaque === opaque);
}
