import { buildOpml, parseOpml } from '../../src/opml/service';

// The OPML format: what an app's or another service's file says, read as XML reads it.

describe('reading OPML', () => {
  test('character references in a URL or a title are decoded, as the five entities are', () => {
    const xml =
      '<?xml version="1.0" encoding="utf-8"?><opml version="2.0"><body>' +
      '<outline text="Caf&#233; &#x2615;" xmlUrl="https://opml.example/feed?a=1&#38;b=2&#x26;c=3&amp;d=4"/>' +
      '<outline text="n&#0;ul" xmlUrl="https://opml.example/n&#0;ul"/>' +
      '</body></opml>';
    expect(parseOpml(xml)).toEqual([
      { url: 'https://opml.example/feed?a=1&b=2&c=3&d=4', title: 'Caf\u00e9 \u2615' },
      { url: 'https://opml.example/nul', title: 'nul' },
    ]);
  });

  test('what castsync writes reads back as it was', () => {
    const feeds = [{ url: 'https://opml.example/f?x=1&y=2', title: 'A < B "q" \u00e9 &#38;', htmlUrl: undefined }];
    expect(parseOpml(buildOpml('t', feeds))).toEqual([{ url: feeds[0]!.url, title: feeds[0]!.title }]);
  });
});
