import { lengthOf, reachedEnd } from '../../src/episodes/played';

test.each([
  [3420, 3600, true], // exactly the last 5 %
  [3419, 3600, false],
  [3600, 3600, true],
  [4000, 3600, true], // past the end (a total the app rounded down)
  [0, 3600, false],
  [3600, null, false], // no length known: never played by position alone
  [10, 0, false],
])('a play at %i s of %p s played the episode: %p', (position, length, played) => {
  expect(reachedEnd(position, lengthOf(length, null))).toBe(played);
});
