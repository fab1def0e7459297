import fc from 'fast-check';
import { addSpan } from '../../src/stats/spans';

// The union of spans heard, kept as sorted disjoint spans: what each new span adds, against a set of seconds.

test('each span adds the seconds no earlier span covered, and the spans stay sorted and disjoint', () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.tuple(fc.integer({ min: 0, max: 200 }), fc.integer({ min: 1, max: 60 })).map(([a, n]) => [a, a + n]),
        { maxLength: 40 },
      ),
      (spans) => {
        const heard: [number, number][] = [];
        const seconds = new Set<number>();
        for (const [from, to] of spans) {
          const before = seconds.size;
          for (let s = from!; s < to!; s++) seconds.add(s);
          expect(addSpan(heard, from!, to!)).toBe(seconds.size - before);
          for (let i = 1; i < heard.length; i++) expect(heard[i]![0]).toBeGreaterThan(heard[i - 1]![1]);
        }
        expect(heard.reduce((n, [a, b]) => n + b - a, 0)).toBe(seconds.size);
      },
    ),
  );
});

test('touching spans merge; a span inside another adds nothing', () => {
  const heard: [number, number][] = [];
  expect(addSpan(heard, 10, 20)).toBe(10);
  expect(addSpan(heard, 20, 30)).toBe(10);
  expect(heard).toEqual([[10, 30]]);
  expect(addSpan(heard, 12, 18)).toBe(0);
  expect(addSpan(heard, 0, 5)).toBe(5);
  expect(heard).toEqual([
    [0, 5],
    [10, 30],
  ]);
  expect(addSpan(heard, 3, 40)).toBe(40 - 3 - 2 - 20);
  expect(heard).toEqual([[0, 40]]);
});
