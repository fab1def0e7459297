import { InvalidInput } from './errors';

// The one rule for text that PostgreSQL cannot store: U+0000 (refused in text and in jsonb) and lone
// UTF-16 surrogates (refused in jsonb, silently turned into U+FFFD in text). A request field holding one
// is refused by its door; a third party's text (a feed, an OPML file, an imported archive) loses the
// character and keeps the rest. And the one rule for how deep JSON may nest, a request's or a third
// party's. docs/hostile-input.md lists where each applies.

/** U+0000, a high surrogate with no low one after it, a low surrogate with no high one before it. */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Why such a field is refused, in the words every door shows. */
export const UNSTORABLE_REASON = 'contains U+0000 or a lone surrogate, which cannot be stored';

/** True when PostgreSQL can store this string as it is. */
export function storable(s: string): boolean {
  UNSTORABLE.lastIndex = 0;
  return !UNSTORABLE.test(s);
}

/** The string without the characters PostgreSQL cannot store: for a third party's text. */
export function cleanText(s: string): string {
  return storable(s) ? s : s.replace(UNSTORABLE, '');
}

/**
 * Where the first string that cannot be stored is, in a parsed request part (a body, the query, the path
 * parameters), as a dotted path (`subscriptions.0.feed_url`, `body` for the value itself); undefined when
 * every string and key is storable. A loop, not recursion: a body may be nested 100,000 deep.
 */
export function unstorableAt(value: unknown): string | undefined {
  type Step = { value: unknown; key?: string; up?: Step };
  const pathOf = (step: Step) => {
    const keys: string[] = [];
    for (let s: Step | undefined = step; s?.key !== undefined; s = s.up) keys.push(s.key);
    return keys.length > 0 ? keys.reverse().join('.') : 'body';
  };
  const pending: Step[] = [{ value }];
  while (pending.length > 0) {
    const step = pending.pop()!;
    if (typeof step.value === 'string') {
      if (!storable(step.value)) return pathOf(step);
      continue;
    }
    if (step.value === null || typeof step.value !== 'object') continue;
    // Pushed last to first, so that the first in document order is looked at first.
    const entries = Object.entries(step.value);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]!;
      const next = { value: child, key, up: step };
      if (!storable(key)) return pathOf(next);
      pending.push(next);
    }
  }
  return undefined;
}

/**
 * How deep JSON may nest: far more than any request or file castsync reads needs (a few levels), and
 * shallow enough that no walk over it, ours or a library's (zod, JSON.stringify, a reviver), runs out of
 * stack. JSON.parse itself reads any depth.
 */
export const MAX_JSON_DEPTH = 64;

/** Why deeper JSON is refused, in the words every door shows. */
export const TOO_DEEP_REASON = `nested more than ${MAX_JSON_DEPTH} deep`;

type Container = Record<string, unknown> | unknown[];

/**
 * Calls `visit` with every array and object of a parsed JSON value and its depth (1 for the value itself),
 * until it returns true; says whether one did. A loop, not recursion: a value may be nested 100,000 deep.
 */
function someContainer(value: unknown, visit: (c: Container, depth: number) => boolean): boolean {
  const pending: unknown[] = [value];
  const depths: number[] = [1];
  while (pending.length > 0) {
    const v = pending.pop();
    const depth = depths.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (visit(v as Container, depth)) return true;
    for (const child of Object.values(v)) {
      if (child === null || typeof child !== 'object') continue;
      pending.push(child);
      depths.push(depth + 1);
    }
  }
  return false;
}

/** True when a parsed JSON value nests deeper than MAX_JSON_DEPTH: what every door refuses. */
export const tooDeep = (value: unknown): boolean => someContainer(value, (_, depth) => depth > MAX_JSON_DEPTH);

/**
 * A third party's JSON document, every string value cleaned. One that cannot be read throws InvalidInput
 * saying why: `not JSON`, or TOO_DEEP_REASON. (No reviver: V8 applies one by recursion, which a deep
 * document overflows.)
 */
export function parseCleanJson(text: string): unknown {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new InvalidInput('not JSON');
  }
  if (typeof doc === 'string') return cleanText(doc);
  const deep = someContainer(doc, (c, depth) => {
    if (depth > MAX_JSON_DEPTH) return true;
    for (const [key, v] of Object.entries(c))
      if (typeof v === 'string' && !storable(v)) (c as Record<string, unknown>)[key] = cleanText(v);
    return false;
  });
  if (deep) throw new InvalidInput(TOO_DEEP_REASON);
  return doc;
}
