import { parseInterchangeAction } from '../../src/episodes/interchange';

const received = new Date('2026-11-21T00:00:00Z');
const base = { podcast: 'https://p.example/feed.xml', episode: 'https://p.example/e.mp3' };

test.each([
  [
    { ...base, action: 'DOWNLOAD', timestamp: '2026-11-20T10:00:00' },
    { action: 'download', at: '2026-11-20T10:00:00.000Z' },
  ],
  [
    { ...base, action: 'new', timestamp: '2026-11-20T10:00:00+02:00' },
    { action: 'new', at: '2026-11-20T08:00:00.000Z' },
  ],
  [
    { ...base, action: 'delete' },
    { action: 'delete', at: received.toISOString() },
  ],
])('reads %j', (raw, expected) => {
  const a = parseInterchangeAction(raw, received);
  if (typeof a === 'string') throw new Error(a);
  expect({ action: a.action, at: a.at.toISOString() }).toEqual(expected);
});

test('a play keeps started, position and total; -1 or null means unknown and is left out', () => {
  const a = parseInterchangeAction({ ...base, action: 'play', started: -1, position: 61.9, total: null }, received);
  expect(a).toMatchObject({ action: 'play', position: 61 });
  expect(a).toHaveProperty('started', undefined);
  expect(a).toHaveProperty('total', undefined);
});

test('other actions carry no position', () => {
  expect(parseInterchangeAction({ ...base, action: 'download', position: 5 }, received)).not.toHaveProperty('position');
});

test.each([
  [null, 'not an object'],
  [[], 'not an object'],
  [{ episode: base.episode, action: 'new' }, 'podcast is required'],
  [{ ...base, action: 'listen' }, 'action: one of download, play, delete, new'],
  [{ ...base, action: 'play' }, 'position: seconds, at least 0, required for play'],
  [{ ...base, action: 'new', timestamp: 'yesterday' }, 'timestamp: YYYY-MM-DDTHH:MM:SS'],
  [{ ...base, action: 'new', guid: 7 }, 'guid must be a string'],
])('refuses %j: %s', (raw, reason) => {
  expect(parseInterchangeAction(raw, received)).toEqual(expect.stringContaining(reason));
});
