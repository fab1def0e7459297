import { XMLParser } from 'fast-xml-parser';
import { parseGuid } from '../subscriptions/service';
import { cleanText } from '../text';
import { isStorable } from '../timestamps';
import { showNotes, xmlReferences } from './notes';
import { podloveChapters, webUrl, type Chapter } from './chapters';
import { FORMAT_PREFERENCE, transcriptFormat, type TranscriptFormat } from './transcripts';

/** One episode of a feed, as its item (RSS 2.0) or entry (Atom) gives it. */
export type FeedItem = {
  /** The guid, else the enclosure URL: how the item is known within its feed. */
  key: string;
  guid: string | null;
  title: string | null;
  enclosureUrl: string | null;
  enclosureType: string | null;
  enclosureLength: number | null;
  publishedAt: Date | null;
  /** Seconds. */
  duration: number | null;
  link: string | null;
  artworkUrl: string | null;
  season: number | null;
  episode: number | null;
  /** Its place in the document (0: first). */
  ord: number;
  /** Where its `podcast:chapters` document is. */
  chaptersUrl: string | null;
  /** Podlove Simple Chapters given inline. */
  chapters: Chapter[] | null;
  /** The `podcast:transcript` to show: of those it names, the first in FORMAT_PREFERENCE. */
  transcript: { url: string; format: TranscriptFormat } | null;
  /** The show notes: markup as the feed gives it, unsanitised, at most MAX_NOTES characters (notes.ts). */
  notes: string | null;
};

/** The newest items kept of a feed. */
export const MAX_ITEMS = 1000;

/**
 * The most items a document may hold, counted before it is parsed: parsing takes the process's thread
 * (the worker's, and with WORKER=true the API's too) for tens of microseconds an item, and a document of
 * 330,000 empty items took 40 s at every fetch. A real episode is over 1 KB, so a feed within the 10 MiB a
 * body may have holds fewer.
 */
export const MAX_DOCUMENT_ITEMS = 10 * MAX_ITEMS;
const ITEM_START = /<(?:item|entry)[\s/>]/g;

/**
 * Whether the document declares entities (`<!ENTITY`, which only a DOCTYPE's internal subset can hold).
 * The same text inside a CDATA section or a comment is text (an episode's notes about XML), skipped
 * whole, in document order. A feed never needs a declaration; the parser's decoder would expand none
 * anyway (below), so this refuses what has no place in a feed rather than being the only guard.
 */
const DECLARATION_OR_TEXT = /<!ENTITY|<!\[CDATA\[|<!--/gi;
function declaresEntities(xml: string): boolean {
  for (DECLARATION_OR_TEXT.lastIndex = 0; ;) {
    const m = DECLARATION_OR_TEXT.exec(xml);
    if (m === null) return false;
    if (m[0].toUpperCase() === '<!ENTITY') return true;
    const end = xml.indexOf(m[0] === '<!--' ? '-->' : ']]>', DECLARATION_OR_TEXT.lastIndex);
    // Unclosed: the rest of the document is its text.
    if (end < 0) return false;
    DECLARATION_OR_TEXT.lastIndex = end + 3;
  }
}

function holdsTooManyItems(xml: string): boolean {
  let n = 0;
  for (ITEM_START.lastIndex = 0; ITEM_START.exec(xml) !== null;) if (++n > MAX_DOCUMENT_ITEMS) return true;
  return false;
}

/** What castsync keeps of a feed's channel (RSS 2.0) or feed element (Atom), and its newest items. */
export type FeedFacts = {
  title: string | null;
  description: string | null;
  link: string | null;
  artworkUrl: string | null;
  author: string | null;
  language: string | null;
  /** The feed's declared `podcast:guid`, when it is a valid guid. */
  podcastGuid: string | null;
  /** Where the feed says it now lives, and the element that says so. */
  newFeedUrl: { url: string; tag: 'itunes:new-feed-url' | 'podcast:newFeedUrl' } | null;
  /** The newest MAX_ITEMS items (by date; undated ones after, in document order). */
  items: FeedItem[];
};

export class FeedParseError extends Error {}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  parseTagValue: false,
  parseAttributeValue: false,
  // The five XML entities and character references only, decoded in one pass as show notes are (notes.ts);
  // what cannot be stored (&#0;) is removed afterwards (text). Entity declarations are refused before the
  // parser sees them, and this decoder would expand none: there is no expansion to cap. The parser's own
  // decoder left character references as they were unless HTML's entities were wanted too (a title showed
  // "Don&#8217;t", an enclosure URL's "&#38;" began a fragment).
  processEntities: { enabled: true, maxEntityCount: 1 },
  entityDecoder: xmlReferences,
  // Episodes' show notes: their markup is kept as raw text (notes.ts), not parsed.
  stopNodes: [
    '*.item.description',
    '*.item.content:encoded',
    '*.item.itunes:summary',
    '*.entry.content',
    '*.entry.summary',
  ],
});

type Node = unknown;

/**
 * The text of an element (or of its first occurrence), cleaned of what cannot be stored (a character
 * reference such as `&#0;` included), trimmed and capped; null when empty.
 */
function text(node: Node, max = 1000): string | null {
  if (Array.isArray(node)) return text(node[0], max);
  let value: unknown = node;
  if (node !== null && typeof node === 'object') value = (node as Record<string, unknown>)['#text'];
  if (typeof value !== 'string') return null;
  const t = cleanText(value).trim();
  // Cleaned again after the cut, which can split a surrogate pair.
  return t === '' ? null : cleanText(t.slice(0, max));
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

const guidOf = (node: Node): string | null => parseGuid(text(node) ?? '') ?? null;

const list = (node: Node): Node[] => (node === undefined ? [] : Array.isArray(node) ? node : [node]);

/** A whole number in a sane range, or null. */
function count(value: string | null, max = 2_147_483_647): number | null {
  if (value === null || !/^\d{1,15}$/.test(value)) return null;
  const n = Number(value);
  return n <= max ? n : null;
}

/** itunes:duration: seconds, MM:SS or HH:MM:SS (fractions dropped). */
function duration(value: string | null): number | null {
  if (value === null) return null;
  const parts = value.split('.')[0]!.split(':');
  if (parts.length > 3 || parts.some((p) => !/^\d{1,9}$/.test(p))) return null;
  const seconds = parts.reduce((total, p) => total * 60 + Number(p), 0);
  return seconds <= 2_147_483_647 ? seconds : null;
}

/**
 * A publication date, or null: unreadable, or outside the years 1 to 9999 (a date no episode has, which
 * PostgreSQL refuses: one such item failed the whole fetch).
 */
function date(value: string | null): Date | null {
  const d = new Date(value === null ? NaN : Date.parse(value));
  return Number.isNaN(d.getTime()) || !isStorable(d) ? null : d;
}

/**
 * The most bytes of a key: it is indexed (feed_items, notification_events), and PostgreSQL refuses an
 * index entry over 2,704 bytes, failing the whole fetch. A guid of 2,048 characters can be 6 KB, an
 * enclosure URL percent-encoded longer still.
 */
const MAX_KEY_BYTES = 2048;
const keyable = (s: string | null): s is string => s !== null && Buffer.byteLength(s) <= MAX_KEY_BYTES;

/**
 * An item, or null when it names neither a guid nor an enclosure (nothing to know it by); a guid or URL too
 * long to index counts as none.
 */
function item(fields: Omit<FeedItem, 'key'>): FeedItem | null {
  const key = keyable(fields.guid) ? fields.guid : keyable(fields.enclosureUrl) ? fields.enclosureUrl : null;
  return key === null ? null : { key, ...fields };
}

/** The transcript to show of the `podcast:transcript` elements: the preferred format castsync reads. */
function transcript(nodes: Node): FeedItem['transcript'] {
  const readable = list(nodes)
    .slice(0, 20)
    .map((n) => {
      const url = webUrl(attr(n, 'url'));
      const format = url === null ? null : transcriptFormat(attr(n, 'type'), url);
      return url === null || format === null ? null : { url, format };
    })
    .filter((t) => t !== null);
  const rank = (t: { format: TranscriptFormat }) => FORMAT_PREFERENCE.indexOf(t.format);
  return readable.sort((a, b) => rank(a) - rank(b))[0] ?? null;
}

/** What an item (RSS or Atom) says of its chapters, transcript and show notes. */
function companions(it: Record<string, Node>): Pick<FeedItem, 'chaptersUrl' | 'chapters' | 'transcript' | 'notes'> {
  const podlove = list(it['psc:chapters'])[0] as Record<string, Node> | undefined;
  const elements = podlove && typeof podlove === 'object' ? list(podlove['psc:chapter']) : [];
  return {
    chaptersUrl: webUrl(attr(it['podcast:chapters'], 'url')),
    chapters: podloveChapters(elements.filter((e) => e !== null && typeof e === 'object') as Record<string, Node>[]),
    transcript: transcript(it['podcast:transcript']),
    notes: showNotes([it['content:encoded'], it['description'], it['itunes:summary'], it['content'], it['summary']]),
  };
}

function rssItem(it: Record<string, Node>, ord: number): FeedItem | null {
  const enclosure = list(it['enclosure'])[0];
  return item({
    ...companions(it),
    guid: text(it['guid'], 2048),
    title: text(it['title']),
    enclosureUrl: webUrl(attr(enclosure, 'url')),
    enclosureType: attr(enclosure, 'type')?.slice(0, 100) ?? null,
    enclosureLength: count(attr(enclosure, 'length'), Number.MAX_SAFE_INTEGER),
    publishedAt: date(text(it['pubDate']) ?? text(it['dc:date'])),
    duration: duration(text(it['itunes:duration'])),
    link: webUrl(text(it['link'], 2048)),
    artworkUrl: webUrl(attr(it['itunes:image'], 'href')),
    season: count(text(it['podcast:season']) ?? text(it['itunes:season'])),
    episode: count(text(it['podcast:episode']) ?? text(it['itunes:episode'])),
    ord,
  });
}

function atomItem(entry: Record<string, Node>, ord: number): FeedItem | null {
  const links = list(entry['link']);
  const enclosure = links.find((l) => attr(l, 'rel') === 'enclosure');
  const alternate = links.find((l) => ['alternate', null].includes(attr(l, 'rel')) && attr(l, 'href'));
  return item({
    ...companions(entry),
    guid: text(entry['id'], 2048),
    title: text(entry['title']),
    enclosureUrl: webUrl(attr(enclosure, 'href')),
    enclosureType: attr(enclosure, 'type')?.slice(0, 100) ?? null,
    enclosureLength: count(attr(enclosure, 'length'), Number.MAX_SAFE_INTEGER),
    publishedAt: date(text(entry['published']) ?? text(entry['updated'])),
    duration: duration(text(entry['itunes:duration'])),
    link: webUrl(alternate ? attr(alternate, 'href') : null),
    artworkUrl: webUrl(attr(entry['itunes:image'], 'href')),
    season: count(text(entry['podcast:season']) ?? text(entry['itunes:season'])),
    episode: count(text(entry['podcast:episode']) ?? text(entry['itunes:episode'])),
    ord,
  });
}

/** The newest MAX_ITEMS distinct items: by date, newest first; undated ones after, in document order. */
function newest(nodes: Node[], read: (node: Record<string, Node>, ord: number) => FeedItem | null): FeedItem[] {
  const seen = new Set<string>();
  const items: FeedItem[] = [];
  nodes.forEach((node, ord) => {
    const it = node !== null && typeof node === 'object' ? read(node as Record<string, Node>, ord) : null;
    if (it && !seen.has(it.key)) {
      seen.add(it.key);
      items.push(it);
    }
  });
  const time = (i: FeedItem) => i.publishedAt?.getTime() ?? -Infinity;
  return items.sort((a, b) => time(b) - time(a) || a.ord - b.ord).slice(0, MAX_ITEMS);
}

/** The move a channel declares: `itunes:new-feed-url`, else `podcast:newFeedUrl`. */
function declaredMove(ch: Record<string, Node>): FeedFacts['newFeedUrl'] {
  for (const tag of ['itunes:new-feed-url', 'podcast:newFeedUrl'] as const) {
    const url = webUrl(text(ch[tag], 2048));
    if (url) return { url, tag };
  }
  return null;
}

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
    newFeedUrl: declaredMove(ch),
    items: newest(list(ch['item']), rssItem),
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
    newFeedUrl: declaredMove(feed),
    items: newest(list(feed['entry']), atomItem),
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
  if (declaresEntities(xml)) throw new FeedParseError('entity declarations are refused');
  if (holdsTooManyItems(xml)) throw new FeedParseError(`more than ${MAX_DOCUMENT_ITEMS} items`);
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
