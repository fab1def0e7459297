// The one rule for text that PostgreSQL cannot store: U+0000 (refused in text and in jsonb) and lone
// UTF-16 surrogates (refused in jsonb, silently turned into U+FFFD in text). A request field holding one
// is refused by its door; a third party's text (a feed, an OPML file, an imported archive) loses the
// character and keeps the rest. docs/hostile-input.md lists where each applies.

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

/** A third party's JSON document, every string value cleaned as it is read. */
export function parseCleanJson(text: string): unknown {
  return JSON.parse(text, (_key, v: unknown) => (typeof v === 'string' ? cleanText(v) : v));
}
