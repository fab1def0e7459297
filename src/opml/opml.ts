import { XMLParser } from 'fast-xml-parser';
import { InvalidInput } from '../errors';
import { xmlReferences } from '../feeds/service';
import { cleanText } from '../text';

/** A feed as OPML carries it: its URL and, when known, its title and web page. */
export type OpmlFeed = { url: string; title?: string | undefined; htmlUrl?: string | undefined };

export const escapeXml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);

/** RFC 822 date, as OPML's dateCreated wants it. */
const rfc822 = (d: Date): string => d.toUTCString();

/**
 * OPML 2.0 of the feeds: `type="rss"` (gPodder needs it), `text` and `title` (the title when known, else
 * the URL: Anytime needs `text`), `xmlUrl`, and `htmlUrl` when known. UTF-8, attributes escaped.
 */
export function buildOpml(title: string, feeds: OpmlFeed[], now = new Date()): string {
  const outlines = feeds.map((f) => {
    const name = escapeXml(f.title ?? f.url);
    const html = f.htmlUrl ? ` htmlUrl="${escapeXml(f.htmlUrl)}"` : '';
    return `    <outline type="rss" text="${name}" title="${name}" xmlUrl="${escapeXml(f.url)}"${html}/>`;
  });
  return [
    '<?xml version="1.0" encoding="utf-8"?>',
    '<opml version="2.0">',
    `  <head><title>${escapeXml(title)}</title><dateCreated>${rfc822(now)}</dateCreated></head>`,
    '  <body>',
    ...outlines,
    '  </body>',
    '</opml>',
    '',
  ].join('\n');
}

/** A document that is not OPML: the reason starts with "not OPML" at every door. */
const notOpml = (detail: string) => new InvalidInput(`not OPML: ${detail}`);

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  // The five XML entities and character references only, as a feed's are read (a URL's "&#38;" is its
  // "&"): no DOCTYPE entities (declarations are refused before parsing, and this decoder expands none).
  processEntities: { enabled: true, maxEntityCount: 1 },
  entityDecoder: xmlReferences,
  htmlEntities: false,
  isArray: (name) => name === 'outline',
});

type Outline = { xmlUrl?: unknown; url?: unknown; text?: unknown; title?: unknown; outline?: Outline[] };

/**
 * The feeds of an OPML document, in document order, from outlines at any depth that have `xmlUrl` (or
 * `url`, which some apps write). A document that is not OPML, or declares entities, is InvalidInput.
 */
export function parseOpml(raw: string): OpmlFeed[] {
  // An OPML file is an app's or another service's text: what cannot be stored loses that character.
  const xml = cleanText(raw);
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) throw notOpml('OPML with a DOCTYPE or entity declarations is refused');
  let doc: { opml?: { body?: { outline?: Outline[] } | string } };
  try {
    doc = parser.parse(xml, true) as typeof doc;
  } catch (err) {
    throw notOpml(`not well-formed XML: ${(err as Error).message.split('\n')[0]}`);
  }
  const body = doc.opml?.body;
  if (doc.opml === undefined || body === undefined) throw notOpml('not an OPML document (no opml/body)');
  const feeds: OpmlFeed[] = [];
  const walk = (outlines: Outline[] | undefined) => {
    for (const o of outlines ?? []) {
      const url = typeof o.xmlUrl === 'string' ? o.xmlUrl : typeof o.url === 'string' ? o.url : undefined;
      if (url) {
        const title = typeof o.title === 'string' ? o.title : typeof o.text === 'string' ? o.text : undefined;
        // Cleaned again: a character reference can name what the raw text did not hold.
        feeds.push({ url: cleanText(url).trim(), title: title === undefined ? undefined : cleanText(title) });
      }
      walk(o.outline);
    }
  };
  walk(typeof body === 'object' ? body.outline : undefined);
  return feeds;
}
