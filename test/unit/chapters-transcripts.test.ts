import { clockTime, jsonChapters, MAX_CHAPTERS, podloveChapters } from '../../src/feeds/chapters';
import { DEFAULT_POLICY } from '../../src/feeds/address-policy';
import { answerRefusal, keptFromRefused } from '../../src/feeds/document-policy';
import { parseFeed } from '../../src/feeds/parse';
import { MAX_CUES, parseTranscript, transcriptFormat } from '../../src/feeds/transcripts';

// The readers of chapters and transcripts against what a hostile or careless feed gives: every one is a
// bounded list of plain text, or a refusal; never an exception of another kind, never markup.

test.each([
  ['00:00:00.000', 0],
  ['01:02:03.5', 3723.5],
  ['02:03', 123],
  ['45', 45],
  ['00:00:01,250', 1.25],
  ['1:2:3', 3723],
  ['1:2:3:4', null],
  ['-5', null],
  ['', null],
  ['99999999', null],
])('clock time %j is %j', (text, seconds) => {
  expect(clockTime(text)).toBe(seconds);
});

test('formats: by type, else by the ending of the address; unknown types are not read', () => {
  expect(transcriptFormat('text/vtt; charset=utf-8', 'https://x.org/a')).toBe('vtt');
  expect(transcriptFormat('application/srt', 'https://x.org/a')).toBe('srt');
  expect(transcriptFormat(null, 'https://x.org/a.SRT')).toBe('srt');
  expect(transcriptFormat(null, 'https://x.org/a.htm')).toBe('html');
  expect(transcriptFormat('application/pdf', 'https://x.org/a.vtt')).toBeNull();
  expect(transcriptFormat(null, 'https://x.org/a')).toBeNull();
});

test('chapters: capped in number, one per start, never a link other than http(s)', () => {
  const many = JSON.stringify({
    chapters: Array.from({ length: 5000 }, (_, i) => ({ startTime: i % 700, title: `c${i}`, url: 'data:,x' })),
  });
  const chapters = jsonChapters(many);
  expect(chapters).toHaveLength(MAX_CHAPTERS);
  expect(new Set(chapters.map((c) => c.start)).size).toBe(MAX_CHAPTERS);
  expect(chapters.every((c) => c.url === null)).toBe(true);
  expect(() => jsonChapters('[1,2')).toThrow('not JSON');
  expect(() => jsonChapters('null')).toThrow('no "chapters" list');
  expect(() => jsonChapters('{"chapters": 5}')).toThrow('no "chapters" list');
  expect(podloveChapters([{ '@start': 'x' }])).toBeNull();
});

test('a title or cue loses what PostgreSQL cannot store, and its whitespace runs', () => {
  expect(jsonChapters(JSON.stringify({ chapters: [{ startTime: 1, title: 'a\u0000b\n\n c' }] }))[0]!.title).toBe(
    'ab c',
  );
  const cues = parseTranscript('vtt', 'WEBVTT\n\n00:01.000 --> 00:02.000\nx\u0000y &#0; &#x41;\n');
  expect(cues).toEqual([{ start: 1, end: 2, speaker: null, text: 'xy A' }]);
});

test('transcripts: capped in cues; unclosed or nested markup read in one pass', () => {
  const vtt = `WEBVTT\n\n${'00:00:01.000 --> 00:00:02.000\nw\n\n'.repeat(MAX_CUES + 100)}`;
  expect(parseTranscript('vtt', vtt)).toHaveLength(MAX_CUES);
  const html = '<p>'.repeat(200_000) + '<p>last</p>' + '<time>'.repeat(1000);
  expect(parseTranscript('html', html)).toEqual([{ start: null, end: null, speaker: null, text: 'last' }]);
  expect(parseTranscript('text', 'one\nline\n\n\ntwo')).toEqual([
    { start: null, end: null, speaker: null, text: 'one line' },
    { start: null, end: null, speaker: null, text: 'two' },
  ]);
  expect(() => parseTranscript('json', '{"segments": {}}')).toThrow('no "segments" list');
  expect(() => parseTranscript('srt', 'nothing')).toThrow('no cues in this srt transcript');
});

test("a feed's chapters and transcripts: only web addresses, the preferred format, Atom too", () => {
  const facts = parseFeed(
    Buffer.from(`<rss xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel><title>x</title>
      <item><guid>a</guid><podcast:chapters url="file:///etc/passwd"/>
        <podcast:transcript url="https://x.org/t.txt" type="text/plain"/>
        <podcast:transcript url="https://x.org/t.json" type="application/json"/>
        <podcast:transcript url="https://x.org/t.pdf" type="application/pdf"/></item></channel></rss>`),
  );
  expect(facts.items[0]).toMatchObject({
    chaptersUrl: null,
    chapters: null,
    transcript: { url: 'https://x.org/t.json', format: 'json' },
  });
  const atom = parseFeed(
    Buffer.from(`<feed xmlns="http://www.w3.org/2005/Atom" xmlns:podcast="https://podcastindex.org/namespace/1.0">
      <entry><id>e</id><podcast:chapters url="https://x.org/c.json"/></entry></feed>`),
  );
  expect(atom.items[0]!.chaptersUrl).toBe('https://x.org/c.json');
});

test.each([
  // The kind's own types, from any address.
  ['transcript', 'text/vtt', '10.0.0.5', undefined],
  ['transcript', 'application/x-subrip', '93.184.216.34', undefined],
  ['transcript', 'text/plain', '10.0.0.5', undefined],
  ['chapters', 'application/json+chapters', '10.0.0.5', undefined],
  ['chapters', 'application/json', '93.184.216.34', undefined],
  // A generic type, or none, only from a public address.
  ['transcript', 'application/octet-stream', '93.184.216.34', undefined],
  ['transcript', '', '2606:2800:220:1::1', undefined],
  ['chapters', 'binary/octet-stream', '93.184.216.34', undefined],
  ['transcript', 'application/octet-stream', '10.0.0.5', 'served as application/octet-stream from a private address'],
  ['transcript', '', '::ffff:127.0.0.1', 'served as no type from a private address'],
  ['transcript', 'application/octet-stream', undefined, 'served as application/octet-stream from a private address'],
  // Anything else, from anywhere.
  ['transcript', 'text/x-yaml', '93.184.216.34', 'served as text/x-yaml, not as transcript'],
  ['chapters', 'text/plain', '93.184.216.34', 'served as text/plain, not as chapters'],
  ['chapters', 'text/vtt', '10.0.0.5', 'served as text/vtt, not as chapters'],
] as const)('a %s served as %j from %s: %s', (kind, type, address, why) => {
  expect(answerRefusal(kind, { type, address })).toBe(why);
});

test('a kept copy is refused by a policy that refuses the address it came from', () => {
  expect(keptFromRefused('127.0.0.1', DEFAULT_POLICY)).toBe(true);
  expect(keptFromRefused('127.0.0.1', { allowPrivate: false, allowCidrs: ['127.0.0.0/8'] })).toBe(false);
  expect(keptFromRefused('10.1.2.3', { allowPrivate: true, allowCidrs: [] })).toBe(false);
  expect(keptFromRefused('93.184.216.34', DEFAULT_POLICY)).toBe(false);
});
