import { cleanText } from '../text';

// An item's show notes: the markup its feed gives (`content:encoded`, else `description`, else
// `itunes:summary`; Atom's `content`, else `summary`), kept as given, bounded, never sanitised here: the
// web page sanitises them when it shows them (src/web/notes.ts), so that a stricter allowlist applies to
// every episode at once, without a fetch.

/** How much of an item's show notes is kept: 64 Ki characters (UTF-16 code units) of markup. */
export const MAX_NOTES = 65_536;

const REFERENCE = /&(?:#(\d{1,8})|#x([\da-f]{1,7})|(lt|gt|amp|quot|apos));/gi;
const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** XML's five entities and its character references decoded (an impossible code point dropped). */
export function unescapeXml(s: string): string {
  return s.replace(REFERENCE, (_, dec: string | undefined, hex: string | undefined, name: string | undefined) => {
    if (name !== undefined) return NAMED[name.toLowerCase()]!;
    const code = dec !== undefined ? Number(dec) : parseInt(hex!, 16);
    return code > 0x10ffff ? '' : String.fromCodePoint(code);
  });
}

/**
 * The XML parser's decoder of attribute values and text (fast-xml-parser's `entityDecoder`): unescapeXml,
 * in one pass. The parser's own left character references as they were unless HTML's entities were wanted
 * too; entity declarations are refused before a document reaches the parser, and this expands none.
 */
export const xmlReferences = {
  decode: unescapeXml,
  reset: () => undefined,
  setXmlVersion: () => undefined,
  setExternalEntities: () => undefined,
  addInputEntities: () => undefined,
};

/**
 * The markup of a show-notes element as the parser leaves it (raw, a stop node): the content of its CDATA
 * sections as it is, the rest with its XML references decoded (escaped HTML becomes HTML).
 */
function markup(raw: string): string {
  return raw
    .split(/(<!\[CDATA\[[\s\S]*?\]\]>)/)
    .map((part) => (part.startsWith('<![CDATA[') ? part.slice(9, -3) : unescapeXml(part)))
    .join('');
}

/** The first MAX_NOTES characters, cut cleanly: no half of a surrogate pair, of a tag or of a reference. */
function bounded(s: string): string {
  if (s.length <= MAX_NOTES) return s;
  let cut = cleanText(s.slice(0, MAX_NOTES));
  const open = cut.lastIndexOf('<');
  if (open > cut.lastIndexOf('>')) cut = cut.slice(0, open);
  return cut.replace(/&#?\w*$/, '');
}

/** The raw text of an element (its first occurrence), or null. */
function raw(node: unknown): string | null {
  if (Array.isArray(node)) return raw(node[0]);
  const value = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)['#text'] : node;
  return typeof value === 'string' ? value : null;
}

/** The show notes of the first of these elements (in order of preference) that has any; null when none has. */
export function showNotes(elements: unknown[]): string | null {
  for (const element of elements) {
    const value = raw(element);
    const notes = value === null ? '' : cleanText(markup(value)).trim();
    if (notes !== '') return bounded(notes);
  }
  return null;
}
