import { clockTime, DocumentError, jsonList, plainTitle } from './chapters';

// Transcripts as castsync keeps and serves them: a list of cues (start and end in seconds when the format
// has times, a speaker when it names one, plain text), read from the formats podcast:transcript names:
// WebVTT, SRT, the podcast namespace's JSON, HTML, and plain text. Every reader is one pass over text
// that the fetch has already bounded, so a hostile document costs its size and nothing more.

export type Cue = { start: number | null; end: number | null; speaker: string | null; text: string };

export type TranscriptFormat = 'vtt' | 'srt' | 'json' | 'html' | 'text';

/** At most this many cues of an episode are kept, of at most MAX_TEXT characters each. */
export const MAX_CUES = 20_000;
const MAX_TEXT = 2000;
const MAX_SPEAKER = 100;

/**
 * The media types of transcripts castsync reads, and the format of each: those the podcast namespace
 * lists (text/vtt, application/x-subrip, application/json, text/html, text/plain) and SRT's other names.
 */
export const TRANSCRIPT_TYPES: Readonly<Record<string, TranscriptFormat>> = {
  'text/vtt': 'vtt',
  'application/x-subrip': 'srt',
  'application/srt': 'srt',
  'text/srt': 'srt',
  'application/x-srt': 'srt',
  'application/json': 'json',
  'text/html': 'html',
  'text/plain': 'text',
};

/** The format a `podcast:transcript` names (its type, else its URL's ending), or null for one castsync cannot read. */
export function transcriptFormat(type: string | null, url: string): TranscriptFormat | null {
  const t = (type ?? '').toLowerCase().split(';')[0]!.trim();
  if (t !== '') return Object.hasOwn(TRANSCRIPT_TYPES, t) ? TRANSCRIPT_TYPES[t]! : null;
  const ending = /\.(vtt|srt|json|html?|txt)$/i.exec(new URL(url).pathname)?.[1]?.toLowerCase();
  if (ending === 'htm') return 'html';
  if (ending === 'txt') return 'text';
  return (ending as TranscriptFormat | undefined) ?? null;
}

/** Of an item's transcripts, the one to fetch: one with times first (WebVTT, SRT, JSON), then HTML, then text. */
export const FORMAT_PREFERENCE: TranscriptFormat[] = ['vtt', 'srt', 'json', 'html', 'text'];

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** Text of markup: tags dropped, the common entities and character references read, whitespace collapsed. */
function textOf(markup: string): string {
  const decoded = markup.replace(/<[^>]*>/g, '').replace(/&(#x[0-9a-f]{1,6}|#\d{1,7}|[a-z]{2,6});/gi, (all, name) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '';
    }
    return ENTITIES[name.toLowerCase()] ?? (name.toLowerCase() === 'lrm' || name.toLowerCase() === 'rlm' ? '' : all);
  });
  return plainTitle(decoded, MAX_TEXT);
}

function cue(start: number | null, end: number | null, speaker: string | null, text: string): Cue | null {
  const t = textOf(text);
  return t === '' ? null : { start, end, speaker: speaker ? plainTitle(speaker, MAX_SPEAKER) || null : null, text: t };
}

const TIMING = /^\s*([\d:.,]+)\s*-->\s*([\d:.,]+)/;

/**
 * WebVTT or SRT: blocks separated by blank lines, each with a timing line (`start --> end`) and its text
 * after it; a WebVTT voice tag (`<v Name>`) names the speaker. Blocks without a timing (the header,
 * NOTE, STYLE, REGION, SRT's numbers alone) are skipped.
 */
function timedText(body: string): Cue[] {
  const cues: Cue[] = [];
  for (const block of body.replace(/\r\n?/g, '\n').split(/\n{2,}/)) {
    if (cues.length >= MAX_CUES) break;
    const lines = block.split('\n');
    const at = lines.findIndex((l) => TIMING.test(l));
    if (at < 0 || at > 1) continue;
    const [, from, to] = TIMING.exec(lines[at]!)!;
    const start = clockTime(from);
    if (start === null) continue;
    const text = lines.slice(at + 1).join(' ');
    const voice = /<v(?:\.[^\s>]*)?\s+([^>]+)>/.exec(text)?.[1] ?? null;
    const c = cue(start, clockTime(to), voice, text);
    if (c) cues.push(c);
  }
  return cues;
}

/**
 * The podcast namespace's JSON transcript (`{"segments": [{"speaker", "startTime", "endTime", "body"}]}`).
 * Segments are often single words: those of one speaker are joined until a sentence ends.
 */
function jsonTranscript(body: string): Cue[] {
  const cues: Cue[] = [];
  let open: Cue | null = null;
  for (const s of jsonList(body, 'segments')) {
    if (s === null || typeof s !== 'object') continue;
    const { startTime, endTime, speaker, body: words } = s as Record<string, unknown>;
    if (typeof words !== 'string') continue;
    const start = typeof startTime === 'number' && Number.isFinite(startTime) && startTime >= 0 ? startTime : null;
    const end = typeof endTime === 'number' && Number.isFinite(endTime) && endTime >= 0 ? endTime : null;
    const who = typeof speaker === 'string' ? speaker : null;
    const joinable = open && open.speaker === (who ? plainTitle(who, MAX_SPEAKER) || null : null);
    if (open && joinable && !/[.?!…]["')\]]?$/.test(open.text) && open.text.length < MAX_TEXT / 4) {
      open.text = plainTitle(`${open.text} ${textOf(words)}`, MAX_TEXT);
      open.end = end ?? open.end;
      continue;
    }
    if (cues.length >= MAX_CUES) break;
    open = cue(start, end, who, words);
    if (open) cues.push(open);
  }
  return cues;
}

/**
 * HTML as the podcast namespace shows it: `<cite>Speaker:</cite> <time>0:00</time> <p>text</p>`, each
 * paragraph a cue with the last speaker and time before it; a page of paragraphs without times gives cues
 * without times. One pass over the tags.
 */
function htmlTranscript(body: string): Cue[] {
  const cues: Cue[] = [];
  const tags = /<(\/?)(cite|time|p)\b[^>]*>/gi;
  let open: { name: string; from: number } | null = null;
  let speaker: string | null = null;
  let start: number | null = null;
  for (let m = tags.exec(body); m && cues.length < MAX_CUES; m = tags.exec(body)) {
    const [whole, closing, tag] = m;
    const name = tag!.toLowerCase();
    if (!closing) {
      open = { name, from: m.index + whole.length };
      continue;
    }
    if (!open || open.name !== name) continue;
    const inner = body.slice(open.from, m.index);
    open = null;
    if (name === 'cite') speaker = textOf(inner).replace(/:$/, '') || null;
    else if (name === 'time') start = clockTime(textOf(inner));
    else {
      const c = cue(start, null, speaker, inner);
      if (c) cues.push(c);
    }
  }
  return cues;
}

/** Plain text: each paragraph (lines up to a blank one) a cue without a time. */
function plainTranscript(body: string): Cue[] {
  const cues: Cue[] = [];
  for (const paragraph of body.replace(/\r\n?/g, '\n').split(/\n{2,}/)) {
    if (cues.length >= MAX_CUES) break;
    const t = plainTitle(paragraph, MAX_TEXT);
    if (t !== '') cues.push({ start: null, end: null, speaker: null, text: t });
  }
  return cues;
}

/** The cues of a transcript document of the given format; a document with none is refused. */
export function parseTranscript(format: TranscriptFormat, body: string): Cue[] {
  const cues =
    format === 'vtt' || format === 'srt'
      ? timedText(body)
      : format === 'json'
        ? jsonTranscript(body)
        : format === 'html'
          ? htmlTranscript(body)
          : plainTranscript(body);
  if (cues.length === 0) throw new DocumentError(`no cues in this ${format} transcript`);
  return cues;
}
