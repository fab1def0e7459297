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
