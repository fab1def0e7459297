import { MAX_DOCUMENT_ITEMS, parseFeed } from '../../src/feeds/parse';

// What parseFeed reads of a feed's text: the references XML has, however many a large feed holds.

const feed = (items: string) =>
  Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><title>A feed</title>${items}</channel></rss>`);

test('a large feed of escaped text is read whole: references are not entity expansions to cap', () => {
  // 3,000 episodes whose subtitles carry escaped HTML, as many feeds do: about 150,000 references in 2 MB.
  const subtitle = 'Tom &amp; Jerry &lt;b&gt;live&lt;/b&gt; '.repeat(10);
  const items = Array.from(
    { length: 3000 },
    (_, i) =>
      `<item><guid>g${i}</guid><title>Episode ${i} &amp; more</title><itunes:subtitle>${subtitle}</itunes:subtitle></item>`,
  ).join('');
  const facts = parseFeed(feed(items));
  expect(facts.items).toHaveLength(1000);
  expect(facts.items[0]!.title).toBe('Episode 0 & more');
});

test('character references are read as the characters they stand for, in text and attributes, once', () => {
  const facts = parseFeed(
    Buffer.from(`<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel>
  <title>Don&#8217;t Panic &#x26; caf&#233; &#x1F600; A&#0;B</title>
  <itunes:author>Ren&#xE9;e</itunes:author>
  <item>
    <guid>ep&#45;1</guid>
    <title>It&#39;s &#8220;here&#8221;, &amp;#38; stays</title>
    <enclosure url="https://e.example/a.mp3?a=1&amp;b=2&#38;c=3" type="audio/mpeg"/>
  </item>
</channel></rss>`),
  );
  expect(facts.title).toBe('Don’t Panic & café 😀 AB');
  expect(facts.author).toBe('Renée');
  expect(facts.items[0]).toMatchObject({
    guid: 'ep-1',
    title: "It's “here”, &#38; stays",
    enclosureUrl: 'https://e.example/a.mp3?a=1&b=2&c=3',
  });
});

test('a document of more items than a feed within the size cap can hold is refused before it is parsed', () => {
  const empty = (n: number) => Array.from({ length: n }, (_, i) => `<item><guid>${i}</guid></item>`).join('');
  expect(parseFeed(feed(empty(MAX_DOCUMENT_ITEMS))).items).toHaveLength(1000);
  expect(() => parseFeed(feed(empty(MAX_DOCUMENT_ITEMS + 1)))).toThrow('more than 10000 items');
  const atom = Buffer.from(
    `<feed xmlns="http://www.w3.org/2005/Atom"><title>A feed</title>${Array.from(
      { length: MAX_DOCUMENT_ITEMS + 1 },
      (_, i) => `<entry><id>${i}</id></entry>`,
    ).join('')}</feed>`,
  );
  expect(() => parseFeed(atom)).toThrow('more than 10000 items');
});

test('entity declarations are refused; the same text in show notes (CDATA) or a comment is read as text', () => {
  const declared = `<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY a "b">]><rss version="2.0"><channel><title>T &a;</title></channel></rss>`;
  expect(() => parseFeed(Buffer.from(declared))).toThrow('entity declarations are refused');
  const lower = declared.replace('<!ENTITY', '<!entity');
  expect(() => parseFeed(Buffer.from(lower))).toThrow('entity declarations are refused');
  // After a comment and a CDATA section, closed: still a declaration.
  const after = `<!-- a feed --><!DOCTYPE rss [<!-- <![CDATA[ --> <!ENTITY a "b">]><rss version="2.0"><channel><title>T</title></channel></rss>`;
  expect(() => parseFeed(Buffer.from(after))).toThrow('entity declarations are refused');
  const notes = '<p>A DTD declares <code><!ENTITY name "value"></code>; &lt;!ENTITY&gt; too.</p>';
  const facts = parseFeed(
    feed(`<!-- an <!ENTITY in a comment -->
<item><guid>xml-1</guid><title>On XML</title><description><![CDATA[${notes}]]></description></item>`),
  );
  expect(facts.items.map((i) => i.title)).toEqual(['On XML']);
  expect(facts.items[0]!.notes).toContain('<!ENTITY name');
});
