import { showNotes as kept } from '../../src/feeds/notes';
import { showNotes } from '../../src/web/notes';

// Show notes: what the fetcher keeps of an item's element, and what the episode page makes of it.

const shown = (notes: string, seek = true) => showNotes(notes, { seek });

test('the first element with notes is kept: CDATA as it is, escaped HTML unescaped, blank ones passed over', () => {
  expect(kept([undefined, '  ', '<![CDATA[<p>a &amp; b</p>]]>'])).toBe('<p>a &amp; b</p>');
  expect(kept([{ '#text': '&lt;b&gt;x&lt;/b&gt; &#x1F600;', '@type': 'html' }])).toBe('<b>x</b> 😀');
  expect(kept(['&#1114112;x&#0;'])).toBe('x');
  expect(kept([undefined, ''])).toBeNull();
});

test('a link to anything but an absolute http(s) or mailto address keeps its text and loses its address', () => {
  expect(
    shown('<a href="/web/account">a</a><a href="data:text/html,x">b</a><a href="java&#x09;script:x()">c</a>'),
  ).toBe('<a>a</a><a>b</a><a>c</a>');
  expect(shown('<a href="mailto:host@example.org" target="_blank">mail</a>')).toBe(
    '<a href="mailto:host@example.org" rel="noopener nofollow ugc">mail</a>',
  );
});

test('an image keeps an http(s) address and its alt (empty when none); others are dropped', () => {
  expect(shown('<img src="https://example.org/a.png" style="x"><img src="data:image/png;base64,AA" alt="d">')).toBe(
    '<img src="https://example.org/a.png" alt="" loading="lazy" referrerpolicy="no-referrer" />',
  );
});

test('times become seek links, except within a link, in a longer number or word, or without a player', () => {
  expect(shown('<p>0:42, 75:30 and 1:02:03; not 2024-01-01T12:34:56, 12:345 or 1:2</p>')).toBe(
    '<p><a href="#t=42" class="seek" data-seek="42">0:42</a>, <a href="#t=4530" class="seek" data-seek="4530">75:30</a>' +
      ' and <a href="#t=3723" class="seek" data-seek="3723">1:02:03</a>; not 2024-01-01T12:34:56, 12:345 or 1:2</p>',
  );
  expect(shown('<a href="https://example.org/">at <b>12:34</b></a> 12:34')).toBe(
    '<a href="https://example.org/" rel="noopener nofollow ugc">at <b>12:34</b></a> ' +
      '<a href="#t=754" class="seek" data-seek="754">12:34</a>',
  );
  expect(shown('<p>12:34</p>', false)).toBe('<p>12:34</p>');
});

test("blocks stay apart: a feed's divs and sections, and a table's cells each a block of its own", () => {
  expect(shown('<div>Line one</div><div>Line two</div><hr><section>Three</section>')).toBe(
    '<div>Line one</div><div>Line two</div><hr /><div>Three</div>',
  );
  expect(shown('<table style="width:900px"><tr><td width="600">a</td><th>b</th></tr></table>')).toBe(
    '<div><div><div>a</div><div>b</div></div></div>',
  );
  expect(shown('<dl><dt>Guest</dt><dd>Someone</dd></dl><span>in</span><font>line</font>')).toBe(
    '<dl><dt>Guest</dt><dd>Someone</dd></dl>inline',
  );
});

test('plain-text notes keep their paragraphs and line breaks, and their addresses become links', () => {
  expect(shown('Line one\nLine two\r\n\r\nAt 1:02, see https://example.org/a?b=1&c=2. And a < b > c')).toBe(
    '<p>Line one<br />Line two</p><p>At <a href="#t=62" class="seek" data-seek="62">1:02</a>, see ' +
      '<a href="https://example.org/a?b=1&amp;c=2" rel="noopener nofollow ugc">https://example.org/a?b=1&amp;c=2</a>.' +
      ' And a &lt; b &gt; c</p>',
  );
  expect(shown('(https://example.org/x) "javascript:alert(1)" https://example.org/"onmouseover=x')).toBe(
    '<p>(<a href="https://example.org/x" rel="noopener nofollow ugc">https://example.org/x</a>) "javascript:alert(1)" ' +
      '<a href="https://example.org/" rel="noopener nofollow ugc">https://example.org/</a>"onmouseover=x</p>',
  );
  expect(shown('<p>HTML notes</p>\n\nare left as they are')).toBe('<p>HTML notes</p>\n\nare left as they are');
});

test("an address in HTML notes' text is a link too, times within it are not seek links, and a link is left as it is", () => {
  expect(
    shown(
      '<p>See https://example.org/at/12:34?a=1&amp;b=2, then 12:34; <a href="https://example.org/">https://x.org/</a></p>',
    ),
  ).toBe(
    '<p>See <a href="https://example.org/at/12:34?a=1&amp;b=2" rel="noopener nofollow ugc">' +
      'https://example.org/at/12:34?a=1&amp;b=2</a>, then <a href="#t=754" class="seek" data-seek="754">12:34</a>; ' +
      '<a href="https://example.org/" rel="noopener nofollow ugc">https://x.org/</a></p>',
  );
  expect(shown('<p>https://example.org/?q=a&amp;</p>', false)).toBe(
    '<p><a href="https://example.org/?q=a&amp;" rel="noopener nofollow ugc">https://example.org/?q=a&amp;</a></p>',
  );
});

test('notes with nothing left after sanitising are none', () => {
  expect(shown('<script>alert(1)</script> ')).toBeNull();
});
