import sanitizeHtml from 'sanitize-html';

// An episode's show notes on its page. The feed's markup is stored as the feed gave it (src/feeds/notes.ts)
// and sanitised here, each time it is shown: the allowlist below then holds for every episode at once,
// a stricter one included, without waiting for each feed's next fetch; one episode's notes (64 Ki
// characters at most) take a millisecond or two.

/** The addresses a link or an image may have: absolute, of these schemes (none relative to castsync). */
const LINK = /^(?:https?:|mailto:)/i;
const IMAGE = /^https?:/i;

/** An attribute's value when it matches, as the only attributes. */
const only = (name: string, value: string | undefined, pattern: RegExp): Record<string, string> =>
  value !== undefined && pattern.test(value.trim()) ? { [name]: value.trim() } : {};

/**
 * Blocks of other kinds (a feed's `<div>`s, tables, sections) shown as plain blocks: dropped as other tags
 * are, their texts ran together ("Line oneLine two", a table's cells as one word). A table's cells are
 * lines of their own, which a phone's width can hold.
 */
const AS_BLOCK = [
  'section',
  'article',
  'header',
  'footer',
  'aside',
  'main',
  'nav',
  'center',
  'figure',
  'figcaption',
  'address',
  'table',
  'caption',
  'thead',
  'tbody',
  'tfoot',
  'tr',
  'td',
  'th',
];

const OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: [
    'p',
    'div',
    'hr',
    'dl',
    'dt',
    'dd',
    'br',
    'a',
    'b',
    'strong',
    'i',
    'em',
    'ul',
    'ol',
    'li',
    'blockquote',
    'h3',
    'h4',
    'h5',
    'h6',
  ].concat(
    // The pages' Content-Security-Policy allows images from any http(s) host (src/web/router/static.ts).
    ['code', 'pre', 'img'],
  ),
  allowedAttributes: { a: ['href', 'rel'], img: ['src', 'alt', 'loading', 'referrerpolicy'] },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: { img: ['http', 'https'] },
  allowProtocolRelative: false,
  transformTags: {
    ...Object.fromEntries(AS_BLOCK.map((tag) => [tag, 'div'])),
    // The page's own headings are h1 and h2: the notes' are below them.
    h1: 'h3',
    h2: 'h3',
    // A link is the feed's, not castsync's: no target, and said so to search engines and to the opened page.
    // One to any other address keeps its text and loses its address (an `<a>` without one is no link).
    a: (tagName, attribs) => {
      const href = only('href', attribs.href, LINK);
      return { tagName, attribs: href.href ? { ...href, rel: 'noopener nofollow ugc' } : {} };
    },
    img: (tagName, attribs) => ({
      tagName,
      attribs: {
        ...only('src', attribs.src, IMAGE),
        alt: attribs.alt ?? '',
        loading: 'lazy',
        referrerpolicy: 'no-referrer',
      },
    }),
  },
  exclusiveFilter: (frame) => frame.tag === 'img' && !frame.attribs.src,
};

/** `12:34` (minutes and seconds) or `1:02:03` (hours too), not part of a longer number or word. */
const TIME = /(?<![\w:.])(?:(\d{1,2}):([0-5]\d)|(\d{1,3})):([0-5]\d)(?![\w:])/g;

/** The times in a text (escaped HTML) as links that seek the player (follow-along.js). */
function seekLinks(text: string): string {
  return text.replace(TIME, (time, h: string | undefined, hm: string | undefined, m: string | undefined, s: string) => {
    const seconds = h !== undefined ? Number(h) * 3600 + Number(hm) * 60 + Number(s) : Number(m) * 60 + Number(s);
    return `<a href="#t=${seconds}" class="seek" data-seek="${seconds}">${time}</a>`;
  });
}

/**
 * An address in a text (escaped HTML: `&` only as `&amp;`, `&lt;` or `&gt;`): up to a space, a quote or an
 * angle bracket. A final punctuation mark is the sentence's (addressOf).
 */
const ADDRESS = /\bhttps?:\/\/(?:[^\s<>"'&]|&amp;)+/gi;
/** The address without the sentence's final punctuation (which stays text). */
function addressOf(match: string): string {
  let url = match;
  while (/[.,;:!?)\]]$/.test(url) && !url.endsWith('&amp;')) url = url.slice(0, -1);
  return url;
}

/** A text outside any link (escaped HTML) with its addresses as links, and its times too with `seek`. */
function withLinks(text: string, seek: boolean): string {
  let out = '';
  let at = 0;
  for (const m of text.matchAll(ADDRESS)) {
    const url = addressOf(m[0]);
    const before = text.slice(at, m.index);
    out += `${seek ? seekLinks(before) : before}<a href="${url}" rel="noopener nofollow ugc">${url}</a>`;
    at = m.index + url.length;
  }
  const tail = text.slice(at);
  return out + (seek ? seekLinks(tail) : tail);
}

/**
 * Sanitised markup with every address outside a link made a link, and every time one that seeks the
 * player (`seek`: the page has one). The sanitised markup's tags are whole and its attribute values
 * escaped, so a tag is `<...>`.
 */
function linked(html: string, seek: boolean): string {
  let inLink = 0;
  return html
    .split(/(<[^>]*>)/)
    .map((part) => {
      if (part.startsWith('<')) {
        if (/^<a[\s>]/i.test(part)) inLink++;
        else if (/^<\/a>/i.test(part)) inLink = Math.max(0, inLink - 1);
        return part;
      }
      return inLink > 0 ? part : withLinks(part, seek);
    })
    .join('');
}

/** A tag, opening or closing: what tells a feed's HTML notes from plain text (where `a < b` may be). */
const TAG = /<\/?[a-z][\w-]*(?:\s[^<>]*)?\/?>/i;

/**
 * Plain-text notes (a feed that sends text, not HTML) as HTML that looks as the text did: a blank line
 * ends a paragraph and a line break stays one. Angle brackets are the text's own.
 */
function fromPlainText(text: string): string {
  return text
    .trim()
    .split(/\r?\n\s*\r?\n/)
    .map((para) => `<p>${para.trim().replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\r?\n/g, '<br>')}</p>`)
    .join('');
}

/** The notes as the page shows them (HTML), or null when there are none left. */
export function showNotes(notes: string | null, { seek }: { seek: boolean }): string | null {
  if (notes === null) return null;
  const html = sanitizeHtml(TAG.test(notes) ? notes : fromPlainText(notes), OPTIONS).trim();
  if (html === '') return null;
  return linked(html, seek);
}
