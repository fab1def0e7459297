import type { Request } from 'express';
import { entityTags, notModified } from '../../src/http/entity-tags';

// If-Match and If-None-Match as RFC 9110 §8.8.3 and §13.1 read them.

describe('entityTags', () => {
  test.each([
    [undefined, undefined],
    ['*', '*'],
    [' * ', '*'],
    ['', []],
    ['"7"', [{ weak: false, opaque: '"7"' }]],
    ['W/"7"', [{ weak: true, opaque: '"7"' }]],
    [
      ' "a" ,W/"b",, "c"',
      [
        { weak: false, opaque: '"a"' },
        { weak: true, opaque: '"b"' },
        { weak: false, opaque: '"c"' },
      ],
    ],
    // A tag may hold a comma; what is not a tag names nothing, and the members after it still count.
    [
      'W/"x,y", "7"',
      [
        { weak: true, opaque: '"x,y"' },
        { weak: false, opaque: '"7"' },
      ],
    ],
    ['\'7\', w/"8", 7, "9" x, "10"', [{ weak: false, opaque: '"10"' }]],
    ['*, "7"', [{ weak: false, opaque: '"7"' }]],
  ])('%j reads as %j', (header, tags) => {
    expect(entityTags(header)).toEqual(tags);
  });
});

describe('notModified', () => {
  const asked = (inm?: string) => ({ headers: inm === undefined ? {} : { 'if-none-match': inm } }) as Request;
  test.each([
    ['"7"', '"7"', true],
    ['W/"7"', '"7"', true],
    ['"7"', 'W/"7"', true],
    ['"1", W/"7"', '"7"', true],
    ['*', '"7"', true],
    ['"8"', '"7"', false],
    ['"W/7"', '"7"', false],
    ['7', '"7"', false],
    ['', '"7"', false],
    [undefined, '"7"', false],
  ])('If-None-Match %j against %s: %s', (inm, etag, hit) => {
    expect(notModified(asked(inm), etag)).toBe(hit);
  });
});
