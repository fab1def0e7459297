import { Refusal } from '../../src/errors';
import { actionsOf } from '../../src/episodes/records';
import { stateOf } from '../../src/episodes/state';
import type { StateRow } from '../../src/episodes/state-repo';
import { identityOf } from '../../src/opa/episodes';

// The episode state rules (docs/glossary.md, "episode state"): an episode record from its latest actions,
// the actions that say what a record says, and the /v1 body's episode identity.

const at = (hhmm: string) => new Date(`2026-03-01T${hhmm}:00Z`);
const base: StateRow = {
  episode_hash: '5b1c0e7e-2f1d-40c4-8b0f-6d1a3b9e2c11',
  action: 'play',
  changed: at('12:00'),
  device: 'phone',
  podcast_url: 'https://show.example/feed',
  episode_url: 'https://show.example/1.mp3',
  episode_guid: null,
  at: at('10:00'),
  position: 100,
  total: 1000,
  podcast_guid: null,
  item_guid: 'item-1',
  title: 'One',
  published_at: null,
  link: null,
  duration: 1000,
  favourite: null,
};
const row = (r: Partial<StateRow>): StateRow => ({ ...base, ...r });

describe('recordOf: a record from the latest action of each type', () => {
  test('a play: its position, not played; the guid from the feed when the actions name none', () => {
    expect(stateOf([row({})])).toMatchObject({
      position: { value: 100, at: at('10:00') },
      played: { value: false, at: at('10:00') },
      episodeGuid: 'item-1',
      title: 'One',
    });
  });

  test('played: the latest play in its last 5 %, by its total, else the feed duration', () => {
    expect(stateOf([row({ position: 950 })]).played.value).toBe(true);
    expect(stateOf([row({ position: 949 })]).played.value).toBe(false);
    expect(stateOf([row({ position: 950, total: null })]).played.value).toBe(true);
    expect(stateOf([row({ position: 950, total: null, duration: null })]).played.value).toBe(false);
  });

  test('a "new" later than the play: new, and not played; earlier: not new', () => {
    const later = stateOf([row({ position: 1000 }), row({ action: 'new', at: at('11:00'), position: null })]);
    expect(later).toMatchObject({ isNew: { value: true, at: at('11:00') }, played: { value: false, at: at('11:00') } });
    const earlier = stateOf([row({ position: 1000 }), row({ action: 'new', at: at('09:00'), position: null })]);
    expect(earlier).toMatchObject({ isNew: { value: false, at: at('10:00') }, played: { value: true } });
  });

  test('downloaded: the later of download and delete', () => {
    const rows = [row({ action: 'download', at: at('09:00') }), row({ action: 'delete', at: at('09:30') })];
    expect(stateOf(rows).downloaded).toEqual({ value: false, at: at('09:30'), device: 'phone' });
    expect(stateOf(rows.slice(0, 1)).downloaded).toEqual({ value: true, at: at('09:00'), device: 'phone' });
  });

  test('a favourite alone: the episode as the favourite names it, not played', () => {
    const r = stateOf([row({ action: 'favourite', position: null, favourite: true, at: at('08:00') })]);
    expect(r).toMatchObject({ favourite: { value: true, at: at('08:00') }, played: { value: false, at: at('08:00') } });
    expect(r.position).toBeUndefined();
  });
});

describe('actionsOf: the actions that say what a record says', () => {
  const podcast = 'https://show.example/feed';
  const episode = 'https://show.example/1.mp3';
  const names = (list: { action: string; at: Date; position?: number; total?: number }[]) =>
    list.map((a) => [a.action, a.at.toISOString().slice(11, 16), a.position, a.total]);

  test('a position is a play there, with the feed length as its total', () => {
    expect(names(actionsOf({ position: { value: 60, at: at('10:00') } }, podcast, episode, undefined, 1000))).toEqual([
      ['play', '10:00', 60, 1000],
    ]);
  });

  test('played is a play to the end; a position no later than it is the end too, a later one its own play', () => {
    const played = { value: true, at: at('10:00') };
    expect(
      names(actionsOf({ played, position: { value: 60, at: at('09:00') } }, podcast, episode, undefined, 1000)),
    ).toEqual([['play', '10:00', 1000, 1000]]);
    expect(
      names(actionsOf({ played, position: { value: 60, at: at('11:00') } }, podcast, episode, undefined, null)),
    ).toEqual([
      ['play', '11:00', 60, undefined],
      ['play', '10:00', 60, 60],
    ]);
  });

  test('not played and new are a "new"; downloaded a download or a delete', () => {
    const w = {
      played: { value: false, at: at('10:00') },
      isNew: { value: true, at: at('10:05') },
      downloaded: { value: false, at: at('09:00') },
    };
    expect(names(actionsOf(w, podcast, episode, 'g', null))).toEqual([
      ['delete', '09:00', undefined, undefined],
      ['new', '10:00', undefined, undefined],
      ['new', '10:05', undefined, undefined],
    ]);
  });
});

describe("identityOf: a /v1 body's episode", () => {
  test('guids are read as UUIDs; one that is not is the reason, with its name', () => {
    expect(
      identityOf({ podcast_guid: '917393E3-1B1E-5CEF-ACE4-EDAA54E1F810', enclosure_url: 'https://x/1.mp3' }),
    ).toEqual({
      podcastGuid: '917393e3-1b1e-5cef-ace4-edaa54e1f810',
      podcastUrl: undefined,
      syncId: undefined,
      episodeGuid: undefined,
      enclosureUrl: 'https://x/1.mp3',
    });
    expect(identityOf({ sync_id: 'nope' })).toEqual(new Refusal('Invalid sync_id: not a UUID'));
  });
});
