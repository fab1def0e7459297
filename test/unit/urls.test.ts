import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { checkFeedUrl, parseGuid, podcastGuid, urlHash } from '../../src/subscriptions/urls';

describe('feed URL validation', () => {
  test.each([
    ['example.com/feed4', 'No protocol present'],
    ['mailto:someone@example.com', 'No protocol present'],
    ['', 'No protocol present'],
    ['ftp://example.org/feed.xml', 'Unsupported protocol'],
    ['javascript://alert(1)', 'Unsupported protocol'],
    ['https://', 'Invalid URL'],
    ['http://exa mple.com/feed', 'Invalid URL'],
    ['https://example.com:99999/feed', 'Invalid URL'],
    ['https://example.org/' + 'a'.repeat(2100), 'URL too long'],
  ])('%s is reported as %s', (url, problem) => {
    expect(checkFeedUrl(url)).toEqual({ ok: false, problem });
  });

  test('a URL of exactly 2,048 characters is accepted', () => {
    const url = 'https://example.org/' + 'a'.repeat(2048 - 20);
    expect(url).toHaveLength(2048);
    expect(checkFeedUrl(url).ok).toBe(true);
  });

  test.each([
    ['itpc://podcast.example.net/itpc.xml', 'http://podcast.example.net/itpc.xml'],
    ['PCAST://podcast.example.net/a', 'http://podcast.example.net/a'],
    ['feed://podcast.example.net/a', 'http://podcast.example.net/a'],
    ['podcast://podcast.example.net/a', 'http://podcast.example.net/a'],
    ['HTTPS://Example.COM/Feed?A=B', 'https://Example.COM/Feed?A=B'],
  ])('%s is stored as %s', (url, stored) => {
    const r = checkFeedUrl(url);
    expect(r.ok && r.feedUrl).toBe(stored);
  });

  const key = (url: string) => {
    const r = checkFeedUrl(url);
    if (!r.ok) throw new Error(r.problem);
    return r.key;
  };

  test.each([
    ['https://Example.COM/feed', 'https://example.com/feed'],
    ['HTTPS://example.com/feed', 'https://example.com/feed'],
    ['https://example.com:443/feed', 'https://example.com/feed'],
    ['http://example.com:80/feed', 'http://example.com/feed'],
    ['itpc://example.com/feed', 'http://example.com/feed'],
    ['https://example.com/feed#latest', 'https://example.com/feed'],
    ['https://example.com', 'https://example.com/'],
  ])('%s matches %s', (a, b) => {
    expect(key(a)).toBe(key(b));
  });

  test.each([
    ['https://example.com/Feed', 'https://example.com/feed'],
    ['https://example.com/feed?a=1', 'https://example.com/feed?a=2'],
    ['https://example.com:8443/feed', 'https://example.com/feed'],
    ['http://example.com/feed', 'https://example.com/feed'],
  ])('%s does not match %s', (a, b) => {
    expect(key(a)).not.toBe(key(b));
  });

  test('a unicode host is accepted and matches its punycode form', () => {
    expect(key('https://bücher.example/feed')).toBe(key('https://xn--bcher-kva.example/feed'));
  });

  describe('properties', () => {
    test('never throws, whatever the string', () => {
      fc.assert(
        fc.property(fc.string({ unit: 'binary' }), (s) => void checkFeedUrl(s)),
        { numRuns: 2000 },
      );
    });

    const host = fc.domain();
    const pathSeg = fc.stringMatching(/^[A-Za-z0-9._~-]{0,12}$/);
    const feedUrl = fc.record({
      scheme: fc.constantFrom('http', 'https'),
      host,
      path: fc.array(pathSeg, { maxLength: 4 }).map((p) => '/' + p.join('/')),
      query: fc.option(fc.stringMatching(/^[a-z0-9=&]{1,12}$/), { nil: undefined }),
    });
    const render = (u: { scheme: string; host: string; path: string; query?: string | undefined }) =>
      `${u.scheme}://${u.host}${u.path}${u.query ? `?${u.query}` : ''}`;

    test('scheme and host case, the default port and the fragment do not change the key', () => {
      fc.assert(
        fc.property(feedUrl, fc.stringMatching(/^[a-z0-9]{0,8}$/), (u, frag) => {
          const plain = render(u);
          const port = u.scheme === 'http' ? ':80' : ':443';
          const variant = `${u.scheme.toUpperCase()}://${u.host.toUpperCase()}${port}${u.path}${u.query ? `?${u.query}` : ''}#${frag}`;
          expect(key(variant)).toBe(key(plain));
        }),
      );
    });

    test('the key is idempotent: validating the stored URL gives the same key', () => {
      fc.assert(
        fc.property(feedUrl, (u) => {
          const r = checkFeedUrl(render(u));
          if (!r.ok) throw new Error(r.problem);
          expect(key(r.feedUrl)).toBe(r.key);
        }),
      );
    });

    test('a different path or query gives a different key', () => {
      fc.assert(
        fc.property(
          feedUrl,
          pathSeg.filter((s) => s.length > 0),
          (u, extra) => {
            expect(key(render({ ...u, path: `${u.path}/${extra}` }))).not.toBe(key(render(u)));
            expect(key(render({ ...u, query: `${u.query ?? ''}x${extra}` }))).not.toBe(key(render(u)));
          },
        ),
      );
    });
  });

  test('the hash of a key is the first 128 bits of its SHA-256, in hex', () => {
    // SHA-256 of "a": ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb
    expect(urlHash('a')).toBe('ca978112ca1bbdcafac231b39a23dc4d');
    expect(urlHash('b')).not.toBe(urlHash('a'));
  });
});

describe('guids', () => {
  test('the Podcasting 2.0 guid of the specification example', () => {
    expect(podcastGuid('https://mp3s.nashownotes.com/pc20rss.xml')).toBe('917393e3-1b1e-5cef-ace4-edaa54e1f810');
  });

  test('the scheme and trailing slashes do not change the computed guid', () => {
    expect(podcastGuid('http://mp3s.nashownotes.com/pc20rss.xml//')).toBe('917393e3-1b1e-5cef-ace4-edaa54e1f810');
  });

  test('computed guids are version 5 UUIDs, deterministic', () => {
    fc.assert(
      fc.property(fc.webUrl(), (url) => {
        const g = podcastGuid(url);
        expect(g).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        expect(podcastGuid(url)).toBe(g);
      }),
    );
  });

  test('computed guids are RFC 9562 UUIDv5 of the name, for any name and length', () => {
    const namespace = Buffer.from('ead4c236bf5858c6a2c6a6b28d128cb6', 'hex');
    const uuidV5 = (name: string) => {
      const b = createHash('sha1').update(namespace).update(name, 'utf8').digest().subarray(0, 16);
      b[6] = (b[6]! & 0x0f) | 0x50;
      b[8] = (b[8]! & 0x3f) | 0x80;
      return b.toString('hex').replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-');
    };
    // Past 2,048 characters a name takes the path that does not write into the shared buffer.
    const name = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.string({ unit: 'binary', minLength: 2040, maxLength: 2100 }),
    );
    fc.assert(
      fc.property(fc.constantFrom('https://', 'http://', 'HTTPS://', 'feed://'), name, (scheme, n) => {
        const host = `x.example/${n}`.replace(/\/+$/, '');
        expect(podcastGuid(`${scheme}${host}`)).toBe(uuidV5(host));
      }),
      { numRuns: 300 },
    );
  });

  test.each([
    ['A1B2C3D4-E5F6-4711-8899-AABBCCDDEEFF', 'a1b2c3d4-e5f6-4711-8899-aabbccddeeff'],
    ['2d8bb39b-8d34-48d4-b223-a0d01eb27d71', '2d8bb39b-8d34-48d4-b223-a0d01eb27d71'],
    ['not-a-uuid', undefined],
    ['2d8bb39b8d3448d4b223a0d01eb27d71', undefined],
    ['{2d8bb39b-8d34-48d4-b223-a0d01eb27d71}', undefined],
  ])('parseGuid(%s) is %s', (input, expected) => {
    expect(parseGuid(input)).toBe(expected);
  });

  test('any UUID round-trips to lower case', () => {
    fc.assert(fc.property(fc.uuid(), (u) => expect(parseGuid(u.toUpperCase())).toBe(u.toLowerCase())));
  });
});
