import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { tempDirForFile } from './tmp';

// gpodder.net archives as mygpo's `archive` command writes them (mygpo/users/management/commands/archive.py):
// JSON by Python's json.dump(indent=2) with ensure_ascii and no final newline, naive ISO timestamps with
// six fraction digits only when there are microseconds, the files in a directory that GNU tar packs as
// `./NAME` and compresses with `zstd -19`.

/** Python's json.dump(data, f, indent=2): ensure_ascii escapes every non-ASCII UTF-16 unit. */
export const pythonJson = (data: unknown): string =>
  JSON.stringify(data, null, 2).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );

/** datetime.isoformat() of a naive UTC datetime. */
export function pythonIso(iso: string, micros = 0): string {
  const base = iso.replace(/Z$/, '').slice(0, 19);
  return micros === 0 ? base : `${base}.${String(micros).padStart(6, '0')}`;
}

/** Where the archives of the test file that imports this are written: removed after its tests. */
const archives = tempDirForFile('gpodder-archive-');

/** Writes the members into a directory and packs it as archive.py does; returns the file's path. */
export function writeArchive(members: Record<string, string>, { compress = true } = {}): string {
  const dir = fs.mkdtempSync(path.join(archives, 'archive-'));
  const content = path.join(dir, 'content');
  fs.mkdirSync(content);
  for (const [name, text] of Object.entries(members)) fs.writeFileSync(path.join(content, name), text);
  const file = path.join(dir, compress ? 'alice.tar.zstd' : 'alice.tar');
  const args = ['-cf', file, '-C', content, ...(compress ? ['-I', 'zstd -19'] : []), '.'];
  const r = spawnSync('tar', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`tar failed (zstd installed? .ci/run installs it): ${r.stderr}`);
  return file;
}

export const U1 = '3f2b8a1e-0c4d-4e5f-8a9b-1c2d3e4f5a6b';
export const U2 = '7a6b5c4d-3e2f-4a1b-9c8d-7e6f5a4b3c2d';
const DELETED_DEVICE = 'aa11bb22-cc33-4d44-8e55-ff6677889900';

export const FEEDS = {
  /** Known by two URLs; its entries name the second. */
  show: ['https://feeds.example.org/show.xml', 'https://cdn.example.org/show.rss'],
  /** Only a deleted device had it: not a current subscription, though the OPML lists it. */
  gone: 'https://feeds.example.org/gone.xml',
  cafe: 'https://feeds.example.org/caf\u00e9.xml',
};

/** The members of a realistic archive: several devices (one deleted), a podcast with two URLs, entries of
 * two client UUIDs and of none, one with microseconds, a flattr and a play with no position. */
export function realisticMembers({ devices = 2, clean = false }: { devices?: number; clean?: boolean } = {}): Record<
  string,
  string
> {
  const live = [
    { uid: 'pixel', name: 'Pixel 7', type: 'mobile', user_agent: 'AntennaPod/3.4.0' },
    { uid: 'thinkpad', name: 'ThinkPad', type: 'laptop', user_agent: 'gPodder/3.11' },
  ].slice(0, devices);
  const history = (h: Record<string, unknown>) => ({
    created: pythonIso('2024-01-01T00:00:00', 5),
    podcast_ref_url: null,
    episode_ref_url: null,
    started: null,
    stopped: null,
    total: null,
    ...h,
  });
  const subscriptions = [
    {
      id: 11,
      title: 'The Show',
      urls: FEEDS.show,
      by_client: [
        {
          client_id: U1,
          ref_url: FEEDS.show[1],
          created: pythonIso('2019-01-01T00:00:00'),
          deleted: false,
          history: [],
        },
        {
          client_id: DELETED_DEVICE,
          ref_url: FEEDS.show[0],
          created: pythonIso('2018-01-01T00:00:00'),
          deleted: true,
          history: [],
        },
      ],
      episodes: [
        {
          id: 101,
          title: 'Episode one',
          guid: 'show-ep-1',
          urls: ['https://media.example.org/show/1.mp3'],
          history: [
            history({ timestamp: pythonIso('2019-05-01T09:00:00', 123456), client: U2, action: 'download' }),
            history({
              timestamp: pythonIso('2019-05-01T10:00:00'),
              client: U1,
              action: 'play',
              podcast_ref_url: FEEDS.show[1],
              episode_ref_url: 'https://media.example.org/show/1.mp3?ref=app',
              started: 0,
              stopped: 1200,
              total: 1800,
            }),
            // What castsync has no rule for: a flattr, a play with no position (left out with `clean`).
            ...(clean
              ? []
              : [
                  history({ timestamp: pythonIso('2019-05-02T08:00:00'), client: U1, action: 'flattr' }),
                  history({ timestamp: pythonIso('2019-05-02T09:00:00'), client: U2, action: 'play', started: 5 }),
                ]),
          ],
        },
        {
          id: 102,
          title: 'Episode two',
          guid: null,
          urls: ['https://media.example.org/show/2.mp3'],
          history: [
            history({ timestamp: pythonIso('2020-02-02T20:20:20'), client: null, action: 'new' }),
            history({ timestamp: pythonIso('2020-02-03T20:20:20'), client: U2, action: 'delete' }),
          ],
        },
      ],
    },
    {
      id: 12,
      title: 'Gone',
      urls: [FEEDS.gone],
      by_client: [{ client_id: DELETED_DEVICE, ref_url: FEEDS.gone, deleted: true, history: [] }],
      episodes: [],
    },
    {
      id: 13,
      title: 'Caf\u00e9 \u2615',
      urls: [FEEDS.cafe],
      by_client: [{ client_id: U2, ref_url: FEEDS.cafe, deleted: false, history: [] }],
      episodes: [],
    },
  ];
  const opml = `<?xml version="1.0" encoding="utf-8"?>\n<opml version="2.0"><body>${[
    FEEDS.show[0],
    FEEDS.gone,
    FEEDS.cafe,
  ]
    .map((u) => `<outline type="rss" xmlUrl="${u}"/>`)
    .join('')}</body></opml>`;
  return {
    'meta.json': pythonJson({ date: pythonIso('2025-05-01T12:00:00', 42), version: '2025-04-18' }),
    'user.json': pythonJson({ id: 7, username: 'alice', email: 'alice@example.org', settings: {} }),
    'clients.json': pythonJson({
      groups: [{ is_synced: true, devices: live }],
      deleted: [{ uid: 'old-phone', name: 'Old phone' }],
    }),
    'subscriptions.json': pythonJson(subscriptions),
    'subscriptions.opml': opml,
    'chapters.json': pythonJson([]),
    'favorite_episodes.json': pythonJson([]),
  };
}

/** The limits the tests read archives with: the settings' defaults (docs/configuration.md), smaller bytes. */
export const ARCHIVE_LIMITS = {
  maxBytes: 50 * 1024 * 1024,
  maxEntries: 10_000,
  maxMemberBytes: 50 * 1024 * 1024,
  maxRatio: 500,
};
