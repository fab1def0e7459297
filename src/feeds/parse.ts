import { XMLParser } from 'fast-xml-parser';
import { parseGuid } from '../subscriptions/urls';

/** What castsync keeps of a feed's channel (RSS 2.0) or feed element (Atom). Items are not read. */
export type FeedFacts = {
  title: string | null;
  description: string | null;
  link: string | null;
  artworkUrl: string | null;
  author: string | null;
  language: string | null;
  /** The feed's declared `podcast:guid`, when it is a valid guid. */
  podcastGuid: string | null;
  /** `itunes:new-feed-url`: where the feed says it now lives. */
  newFeedUrl: string | null;
};

export class FeedParseError extends Error {}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  parseTagValue: false,
  parseAttributeValue: false,
  // The five XML entities and character references only, with bounded expansion; entity declarations
  // are refused before the parser sees them.
  processEntities: { enabled: true, maxEntityCount: 1, maxTotalExpansions: 100_000, maxExpandedLength: 1_000_000 },
  htmlEntities: false,
  // Episodes are not castsync's business: their text is skipped, not parsed.
  stopNodes: ['*.item', '*.entry'],
});

type Node = unknown;

/** The text of an element (or of its first occurrence), trimmed and capped; null when empty. */
function text(node: Node, max = 1000): string | null {
  if (Array.isArray(node)) return text(node[0], max);
  let value: unknown = node;
  if (node !== null && typeof node === 'object') value = (node as Record<string, unknown>)['#text'];
  if (typeof value !== 'string') return null;
  const t = value.trim();
  return t === '' ? null : t.slice(0, max);
}

function attr(node: Node, name: string): string | null {
  if (Array.isArray(node)) {
    for (const n of node) {
      const v = attr(n, name);
      if (v) return v;
    }
    return null;
  }
  if (node === null || typeof node !== 'object') return null;
  return text((node as Record<string, unknown>)[`@${name}`]);
}

/** An http(s) URL, or null: a feed's links are shown to people and fetched, nothing else is kept. */
function webUrl(value: string | null): string | null {
  if (!value) return null;
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
  } catch {
    return null;
  }
}

const guidOf = (node: Node): string | null => parseGuid(text(node) ?? '') ?? null;

function rssFacts(ch: Record<string, Node>): FeedFacts {
  const image = ch['image'] as Record<string, Node> | undefined;
  const links = Array.isArray(ch['link']) ? ch['link'] : [ch['link']];
  return {
    title: text(ch['title']),
    description: text(ch['description'] ?? ch['itunes:summary'], 10_000),
    link: webUrl(links.map((l) => text(l)).find((l) => l) ?? null),
    artworkUrl: webUrl(attr(ch['itunes:image'], 'href') ?? text(image?.['url'])),
    author: text(ch['itunes:author'] ?? ch['managingEditor'] ?? ch['dc:creator']),
    language: text(ch['language'], 35),
    podcastGuid: guidOf(ch['podcast:guid']),
    newFeedUrl: webUrl(text(ch['itunes:new-feed-url'], 2048)),
  };
}

function atomFacts(feed: Record<string, Node>): FeedFacts {
  const links = (Array.isArray(feed['link']) ? feed['link'] : [feed['link']]) as Node[];
  const alternate = links.find((l) => ['alternate', null].includes(attr(l, 'rel')) && attr(l, 'href'));
  const author = feed['author'] as Record<string, Node> | undefined;
  return {
    title: text(feed['title']),
    description: text(feed['subtitle'], 10_000),
    link: webUrl(alternate ? attr(alternate, 'href') : null),
    artworkUrl: webUrl(text(feed['logo']) ?? attr(feed['itunes:image'], 'href') ?? text(feed['icon'])),
    author: text(Array.isArray(author) ? (author[0] as Record<string, Node>)?.['name'] : author?.['name']),
    language: attr(feed, 'xml:lang')?.slice(0, 35) ?? null,
    podcastGuid: guidOf(feed['podcast:guid']),
    newFeedUrl: webUrl(text(feed['itunes:new-feed-url'], 2048)),
  };
}

/** The document as text, in the encoding its XML declaration names (UTF-8 when none or unknown). */
function decode(body: Buffer): string {
  const declared = /^\s*<\?xml[^>]*encoding=["']([\w.:-]+)["']/.exec(body.subarray(0, 200).toString('latin1'))?.[1];
  if (declared && !/^utf-?8$/i.test(declared)) {
    try {
      return new TextDecoder(declared).decode(body);
    } catch {
      // An encoding the runtime does not know: read as UTF-8.
    }
  }
  return body.toString('utf8');
}

/** The facts of an RSS 2.0 or Atom document; anything else, or XML that declares entities, is refused. */
export function parseFeed(body: Buffer): FeedFacts {
  const xml = decode(body);
  if (/<!ENTITY/i.test(xml)) throw new FeedParseError('entity declarations are refused');
  let doc: Record<string, Node>;
  try {
    doc = parser.parse(xml, true) as Record<string, Node>;
  } catch (err) {
    throw new FeedParseError(`not well-formed XML: ${(err as Error).message.split('\n')[0]}`);
  }
  const rss = doc['rss'] as Record<string, Node> | undefined;
  const channel = rss?.['channel'];
  if (channel && typeof channel === 'object')
    return rssFacts((Array.isArray(channel) ? channel[0] : channel) as Record<string, Node>);
  const feed = doc['feed'];
  if (feed && typeof feed === 'object') return atomFacts(feed as Record<string, Node>);
  throw new FeedParseError('neither RSS 2.0 nor Atom');
}
