import fc from 'fast-check';
import { InvalidInput } from '../../src/errors';
import { cleanText, MAX_JSON_DEPTH, parseCleanJson, storable, tooDeep, unstorableAt } from '../../src/text';

describe('text PostgreSQL cannot store', () => {
  test('U+0000 and lone surrogates are unstorable; pairs, U+FFFD and other controls are fine', () => {
    for (const s of ['\u0000', 'a\u0000', '\ud800', 'a\udc00b', '\udc00\ud800', 'x\ud83d'])
      expect(storable(s)).toBe(false);
    for (const s of ['', 'plain', '\ud83d\ude00', '\ufffd', '\u0001\u001f', 'é']) expect(storable(s)).toBe(true);
  });

  test('cleaning removes exactly those characters and keeps a pair whole', () => {
    expect(cleanText('a\u0000b\ud800c\udc00d\ud83d\ude00')).toBe('abcd\ud83d\ude00');
    fc.assert(
      fc.property(fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((n) => String.fromCharCode(n)) }), (s) => {
        const c = cleanText(s);
        expect(storable(c)).toBe(true);
        if (storable(s)) expect(c).toBe(s);
      }),
      { seed: 46, numRuns: 500 },
    );
  });

  test('the path of the first unstorable string or key; undefined when there is none', () => {
    expect(unstorableAt({ a: [{ b: 'ok' }, { b: 'x\u0000' }] })).toBe('a.1.b');
    expect(unstorableAt({ ['k\u0000']: 1 })).toBe('k\u0000');
    expect(unstorableAt('\ud800')).toBe('body');
    expect(unstorableAt({ a: [1, null, true, 'fine'] })).toBeUndefined();
  });

  test('a value nested 100,000 deep is walked without running out of stack', () => {
    let deep: unknown = '\u0000';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(unstorableAt(deep)).toBe(Array(100_000).fill('0').join('.'));
  });

  test("a third party's JSON is read with its strings cleaned", () => {
    expect(parseCleanJson('{"a":"x\\u0000y","b":["\\ud800z"],"n":1}')).toEqual({ a: 'xy', b: ['z'], n: 1 });
    expect(parseCleanJson('"\\u0000top"')).toBe('top');
    expect(() => parseCleanJson('{"a":')).toThrow(new InvalidInput('not JSON'));
  });
});

describe('JSON nested too deep', () => {
  const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

  test(`${MAX_JSON_DEPTH} levels are read, one more is refused, by the request check and the third party's reader alike`, () => {
    expect(tooDeep(JSON.parse(nested(MAX_JSON_DEPTH)))).toBe(false);
    expect(tooDeep(JSON.parse(nested(MAX_JSON_DEPTH + 1)))).toBe(true);
    expect(tooDeep({ a: [1, 'x', null, { b: [] }] })).toBe(false);
    expect(tooDeep('text')).toBe(false);
    expect(parseCleanJson(nested(MAX_JSON_DEPTH))).toHaveLength(1);
    expect(() => parseCleanJson(nested(MAX_JSON_DEPTH + 1))).toThrow(new InvalidInput('nested more than 64 deep'));
  });

  test('100,000 levels are looked at without running out of stack', () => {
    const text = nested(100_000);
    expect(tooDeep(JSON.parse(text))).toBe(true);
    expect(() => parseCleanJson(`{"a":${text}}`)).toThrow(InvalidInput);
  });
});
