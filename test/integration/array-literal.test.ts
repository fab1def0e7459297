import fc from 'fast-check';
import pg from 'pg';
import { arrayLiteral } from '../../src/db/array-literal';
import { freshDatabase, testPool } from '../helpers/db';

let db: Awaited<ReturnType<typeof freshDatabase>>;
let pool: pg.Pool;
beforeAll(async () => {
  db = await freshDatabase();
  pool = testPool(db.url, { max: 1 });
});
afterAll(async () => {
  await pool.end();
  await db.drop();
});

// PostgreSQL text cannot hold NUL; everything else, quotes, backslashes, braces, commas, spaces and
// the word NULL included, must come back as it went.
const text = fc.string({ unit: 'binary' }).map((s) => s.replace(/\0/g, ''));
const tricky = fc.constantFrom('', 'NULL', 'null', '"', '\\', '\\"', '{}', '{a,b}', ' x ', ',', 'a"b\\c');

test('strings and NULLs come back from PostgreSQL exactly as they were', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(fc.option(fc.oneof(text, tricky), { nil: null }), { maxLength: 20 }), async (values) => {
      const { rows } = await pool.query('SELECT $1::text[] AS a', [arrayLiteral(values)]);
      expect(rows[0].a).toEqual(values);
    }),
    { numRuns: 300 },
  );
});

test('numbers, booleans and uuids', async () => {
  const { rows } = await pool.query('SELECT $1::bigint[] AS n, $2::bool[] AS b, $3::uuid[] AS u', [
    arrayLiteral([1, null, 9007199254740991]),
    arrayLiteral([true, false, null]),
    arrayLiteral(['2d8bb39b-8d34-48d4-b223-a0d01eb27d71', null]),
  ]);
  expect(rows[0]).toEqual({
    n: ['1', null, '9007199254740991'],
    b: [true, false, null],
    u: ['2d8bb39b-8d34-48d4-b223-a0d01eb27d71', null],
  });
  expect(arrayLiteral([])).toBe('{}');
});
