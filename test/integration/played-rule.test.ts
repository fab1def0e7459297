import fc from 'fast-check';
import { PLAYED_SQL, playedOf } from '../../src/episodes/played';
import { testApp, type TestApp } from '../helpers/app';

// The one played rule has two forms, TypeScript for the readers and SQL for the Up next sweep: asked the
// same question, PostgreSQL and TypeScript give the same answer.

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t?.close();
});

const SQL = `SELECT ${PLAYED_SQL({
  position: '$1::int',
  total: '$2::int',
  duration: '$3::int',
  playAt: '$4::timestamptz',
  newAt: '$5::timestamptz',
})} AS played`;

const seconds = fc.option(fc.integer({ min: -5, max: 4000 }), { nil: null });
const minute = fc.integer({ min: 0, max: 5 }).map((m) => new Date(Date.UTC(2026, 9, 1, 10, m)));

test('PLAYED_SQL says played exactly when playedOf does', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 0, max: 4000 }),
      seconds,
      seconds,
      minute,
      fc.option(minute, { nil: undefined }),
      async (position, total, duration, playAt, newAt) => {
        const ts = playedOf({ at: playAt, position, total }, newAt && { at: newAt }, duration)?.value ?? false;
        const sql = await t.db.query<{ played: boolean }>(SQL, [position, total, duration, playAt, newAt ?? null]);
        expect(sql.rows[0]!.played).toBe(ts);
      },
    ),
    { numRuns: 300 },
  );
});
