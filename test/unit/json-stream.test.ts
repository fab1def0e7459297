import fc from 'fast-check';
import { InvalidInput } from '../../src/errors';
import { JsonReader, NotJson, type JsonPath, type JsonReaderOptions } from '../../src/transfer/json-stream';
import { cleanText } from '../../src/text';

// The streaming JSON reader that uploaded archives are read with: what it builds is what JSON.parse builds
// (strings cleaned), however the bytes are cut; split containers hand out their members and keep none.

const whole: JsonReaderOptions = { split: () => false, maxValueChars: 1 << 20, name: 'doc' };

/** Reads the bytes cut at the given places; returns what was handed out. */
function read(bytes: Uint8Array, cuts: number[], options = whole) {
  const out: [JsonPath, unknown, unknown][] = [];
  const reader = new JsonReader(options, (path, value, within) =>
    // `within` as it was then: it goes on being built.
    out.push([[...path], value, structuredClone(within)]),
  );
  let from = 0;
  for (const at of [...cuts.filter((c) => c < bytes.length).sort((a, b) => a - b), bytes.length]) {
    reader.write(bytes.subarray(from, at));
    from = at;
  }
  reader.end();
  return { out, top: reader.top };
}

const anyText = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((n) => String.fromCharCode(n)) });
const anyJson = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    anyText,
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(anyText, fc.constant('__proto__')), tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** JSON.parse, every string and key cleaned of what PostgreSQL cannot store. */
const parseClean = (text: string): unknown =>
  JSON.parse(text, (_key, v: unknown) => {
    if (typeof v === 'string') return cleanText(v);
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [cleanText(k), x as unknown]));
  });

describe('the streaming JSON reader', () => {
  test('builds what JSON.parse builds (strings and keys cleaned), cut anywhere, indented or not', () => {
    fc.assert(
      fc.property(anyJson, fc.array(fc.nat(400)), fc.boolean(), (value, cuts, indent) => {
        const text = JSON.stringify(value, null, indent ? 2 : undefined);
        const { out } = read(Buffer.from(text), cuts);
        expect(out).toEqual([[[], parseClean(text), undefined]]);
      }),
      { seed: 52, numRuns: 500 },
    );
  });

  test('a split container hands out its members with their paths, and the kept container around them', () => {
    const text = '{"a": [1, {"b": 2}], "c": {"d": [3, 4], "e": "x"}, "f": []}';
    const split = (p: JsonPath) =>
      p.length === 0 || (p.length === 2 && p[1] === 'd') || (p.length === 1 && p[0] === 'a');
    const { out, top } = read(Buffer.from(text), [3, 17], { ...whole, split });
    expect(top).toBe('object');
    expect(out).toEqual([
      [['a', 0], 1, undefined],
      [['a', 1], { b: 2 }, undefined],
      [['c', 'd', 0], 3, {}],
      [['c', 'd', 1], 4, {}],
      [['c'], { e: 'x' }, undefined],
      [['f'], [], undefined],
    ]);
  });

  test('numbers in every form JSON has, an upper-case exponent too (as Java and other writers put it)', () => {
    const text = '[1E5, 2.5E-3, -1E+2, 1e5, 0, -0.5, 12]';
    for (const cuts of [[], [2], [3, 9]]) {
      expect(read(Buffer.from(text), cuts).out).toEqual([[[], JSON.parse(text), undefined]]);
    }
  });

  test('text that is not JSON, or cut short, is refused as NotJson', () => {
    const broken = ['', '{', '[1,]', '{"a" 1}', '[1 2]', '{"a":1}}', 'tru', '01', '"\\x"', '"a\nb"', '[1]x', '{,}'];
    for (const text of broken) {
      for (const cuts of [[], [1]]) expect(() => read(Buffer.from(text), cuts)).toThrow(NotJson);
    }
    expect(() => read(Buffer.from('['.repeat(65) + ']'.repeat(65)), [])).toThrow(/nested more than 64 deep/);
  });

  test('a kept value longer than the bound is refused, wherever the document is cut', () => {
    const split = (p: JsonPath) => p.length === 0;
    const big = JSON.stringify(['small', 'x'.repeat(5000), 'small']);
    for (const cuts of [[], [100, 2000, 4000]]) {
      expect(() => read(Buffer.from(big), cuts, { split, maxValueChars: 1000, name: 'doc' })).toThrow(InvalidInput);
    }
    const many = JSON.stringify(Array.from({ length: 1000 }, (_, i) => `item ${i}`));
    expect(read(Buffer.from(many), [500, 5000], { split, maxValueChars: 100, name: 'doc' }).out).toHaveLength(1000);
  });
});
