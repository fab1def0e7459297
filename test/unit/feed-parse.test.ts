import { parseFeed } from '../../src/feeds/parse';

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
