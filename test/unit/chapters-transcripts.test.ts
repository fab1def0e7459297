import { clockTime, jsonChapters, MAX_CHAPTERS, podloveChapters } from '../../src/feeds/chapters';
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
