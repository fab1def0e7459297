import fs from 'node:fs';
import { InvalidInput } from '../../src/errors';
import { readGpodderArchive, readGpodderArchiveFile, runImport, type FileBytes } from '../../src/transfer/service';
import { as, testApp, type TestApp, type TestUser } from '../helpers/app';
import { ARCHIVE_LIMITS, FEEDS, pythonJson, realisticMembers, U1, U2, writeArchive } from '../helpers/gpodder-archive';

// A gpodder.net archive, built as mygpo's archive command writes it, brought in: what the gpodder v2 API
// and /v1 then answer is what the archive holds.

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

const limits = ARCHIVE_LIMITS;
const importBytes = (u: TestUser, file: FileBytes, dryRun = false) =>
  runImport(
    t.db,
    u.id,
    { source: 'gpodder-archive', file, limits },
    {
      dryRun,
      policy: { allowPrivate: false, allowCidrs: [] },
      limits: { timeoutMs: 1000, maxBytes: 1, totalMs: 1000, totalBytes: 1 },
      progress: () => {},
    },
  );
const importFile = (u: TestUser, file: string, dryRun = false) =>
  importBytes(u, () => fs.createReadStream(file), dryRun);
const bytesOf = (...pieces: Uint8Array[]) => readGpodderArchive(() => pieces, limits);
const fileOf = (file: string, l = limits) => readGpodderArchive(() => fs.createReadStream(file), l);

const device = (uuid: string) => `gpodder.net-${uuid.slice(0, 8)}`;

async function everything(u: TestUser) {
  const api = as(t, u);
  return {
    // (Nextcloud's route: naming a gpodder device would create it.) Without its timestamp: that is the user's
    // last change stamp, which every batch of actions takes, new or not (an import again takes one more).
    pull: (({ add, remove }) => ({ add, remove }))(
      (await api.get('/index.php/apps/gpoddersync/subscriptions?since=0')).body as { add: string[]; remove: string[] },
    ),
    opa: (await api.get('/v1/subscriptions')).body.subscriptions as { feed_url: string; is_subscribed: boolean }[],
    actions: (await api.get(`/api/2/episodes/${u.name}.json?since=0`)).body.actions as Record<string, unknown>[],
    devices: (await api.get(`/api/2/devices/${u.name}.json`)).body as { id: string; caption: string; type: string }[],
  };
}

describe('a gpodder.net archive', () => {
  const file = writeArchive(realisticMembers());

  test('brings the current subscriptions, every history entry as an action, and the live devices', async () => {
    const u = await t.user('arrive');
    const summary = await importFile(u, file);
    expect(summary.feeds).toMatchObject({ total: 2, added: 2, removedOnRemote: 1, refused: [] });
    expect(summary.actions).toMatchObject({ total: 6, added: 4 });
    expect(summary.actions.refused.map((r) => r.item)).toEqual(['action 2', 'action 3']);
    expect(summary.actions.refused[0]!.reason).toMatch(/action/);
    expect(summary.actions.refused[1]!.reason).toMatch(/position/);

    const got = await everything(u);
    // One subscription per podcast, by the URL gpodder.net served (its first); a podcast only a deleted
    // device had is not current, whatever the OPML says.
    expect(got.pull.add.sort()).toEqual([FEEDS.cafe, FEEDS.show[0]].sort());
    expect(
      got.opa
        .filter((s) => s.is_subscribed)
        .map((s) => s.feed_url)
        .sort(),
    ).toEqual(got.pull.add.sort());
    expect(got.actions).toEqual([
      {
        podcast: FEEDS.show[0],
        episode: 'https://media.example.org/show/1.mp3',
        guid: 'show-ep-1',
        action: 'download',
        timestamp: '2019-05-01T09:00:00',
        device: device(U2),
      },
      {
        podcast: FEEDS.show[1],
        episode: 'https://media.example.org/show/1.mp3?ref=app',
        guid: 'show-ep-1',
        action: 'play',
        timestamp: '2019-05-01T10:00:00',
        device: device(U1),
        started: 0,
        position: 1200,
        total: 1800,
      },
      {
        podcast: FEEDS.show[0],
        episode: 'https://media.example.org/show/2.mp3',
        action: 'new',
        timestamp: '2020-02-02T20:20:20',
      },
      {
        podcast: FEEDS.show[0],
        episode: 'https://media.example.org/show/2.mp3',
        action: 'delete',
        timestamp: '2020-02-03T20:20:20',
        device: device(U2),
      },
    ]);
    // The live devices with caption and type; each client UUID of the history a device of its own.
    expect(got.devices.map((d) => [d.id, d.caption, d.type]).sort()).toEqual(
      [
        ['pixel', 'Pixel 7', 'mobile'],
        ['thinkpad', 'ThinkPad', 'laptop'],
        [device(U1), `gpodder.net history of device ${U1}`, 'other'],
        [device(U2), `gpodder.net history of device ${U2}`, 'other'],
      ].sort(),
    );
  });

  test('a dry run says the same and changes nothing; a second import adds nothing', async () => {
    const u = await t.user('twice');
    const preview = await importFile(u, file, true);
    expect(preview).toMatchObject({ dryRun: true, feeds: { added: 2 }, actions: { added: 4 }, devices: { added: 4 } });
    expect(await everything(u)).toEqual({
      pull: expect.objectContaining({ add: [], remove: [] }),
      opa: [],
      actions: [],
      devices: [],
    });
    await importFile(u, file);
    const before = await everything(u);
    const again = await importFile(u, file);
    expect([again.feeds.added, again.actions.added, again.devices.added]).toEqual([0, 0, 0]);
    expect(await everything(u)).toEqual(before);
  });

  test('a device keeps its gpodder.net type, a tablet too (castsync keeps tablets as gpodder.net does)', async () => {
    const u = await t.user('tablet');
    const members = realisticMembers();
    const devices = [
      { uid: 'tab', name: 'Galaxy Tab', type: 'tablet', user_agent: 'AntennaPod/3.4.0' },
      { uid: 'box', name: 'Home server', type: 'server', user_agent: 'gPodder/3.11' },
    ];
    members['clients.json'] = pythonJson({ groups: [{ is_synced: false, devices }], deleted: [] });
    const summary = await importFile(u, writeArchive(members));
    expect(summary.devices.refused).toEqual([]);
    const { devices: got } = await everything(u);
    const kept = got.filter((d) => ['tab', 'box'].includes(d.id)).map((d) => [d.id, d.type]);
    expect(kept.sort()).toEqual([
      ['box', 'server'],
      ['tab', 'tablet'],
    ]);
  });

  test('with one device in the file, its entries are that device; a plain tar is read too', async () => {
    const u = await t.user('single');
    await importFile(u, writeArchive(realisticMembers({ devices: 1 }), { compress: false }));
    const { actions, devices } = await everything(u);
    expect(devices.map((d) => d.id)).toEqual(['pixel']);
    expect(new Set(actions.map((a) => a.device))).toEqual(new Set(['pixel', undefined]));
  });

  test('damaged, foreign, incomplete or oversized files are refused with a reason and write nothing', async () => {
    const u = await t.user('damaged');
    const bytes = fs.readFileSync(file);
    const members = realisticMembers();
    const forged = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xa0, ...Buffer.alloc(300)]);
    const refusals: [string, () => Promise<unknown>][] = [
      ['truncated', () => bytesOf(bytes.subarray(0, bytes.length - 40))],
      ['corrupt', () => bytesOf(Buffer.concat([bytes.subarray(0, 20), Buffer.alloc(200, 7)]))],
      ['foreign', () => bytesOf(Buffer.from(pythonJson({ not: 'an archive' }).repeat(50)))],
      ['empty', () => bytesOf()],
      ['no subscriptions', () => fileOf(writeArchive({ 'meta.json': members['meta.json']! }))],
      ['subscriptions not a list', () => fileOf(writeArchive({ 'subscriptions.json': '{"a": []}' }))],
      ['subscriptions not JSON', () => fileOf(writeArchive({ 'subscriptions.json': '[{"a": nope}]' }))],
      ['bomb', () => fileOf(file, { ...limits, maxBytes: 4096 })],
      ['too many entries', () => fileOf(file, { ...limits, maxEntries: 3 })],
      ['a member over its bound', () => fileOf(file, { ...limits, maxMemberBytes: 1000 })],
      ['missing', () => readGpodderArchiveFile('/nonexistent/alice.tar.zstd', limits)],
      // A frame header asking for a 1 GiB window (descriptor 0xA0), which the decoder would allocate: first,
      // and after a whole good frame.
      ['huge window', () => bytesOf(forged)],
      ['huge window later', () => bytesOf(bytes, forged)],
    ];
    for (const [what, reading] of refusals) {
      const err = await reading().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect([what, err instanceof InvalidInput]).toEqual([what, true]);
      expect((err as Error).message).toMatch(/^(Not a gpodder\.net archive: |Cannot read )/);
    }
    expect(await everything(u)).toMatchObject({ opa: [], actions: [], devices: [] });
  });

  test('a member over its bound, or a file that grows more than the ratio, is refused by a message that says so', async () => {
    const u = await t.user('bounded');
    const over = await fileOf(file, { ...limits, maxMemberBytes: 1000 }).catch((e: unknown) => e);
    expect((over as Error).message).toBe(
      'Not a gpodder.net archive: its member subscriptions.json holds more than 1000 bytes once decompressed',
    );
    // 8 MiB of white space in the list: a few hundred bytes once compressed.
    const bomb = writeArchive({ 'subscriptions.json': `[${' '.repeat(8 * 1024 * 1024)}]` });
    expect(fs.statSync(bomb).size).toBeLessThan(4096);
    const grown = await importFile(u, bomb).catch((e: unknown) => e);
    expect(grown).toBeInstanceOf(InvalidInput);
    expect((grown as Error).message).toBe(
      'Not a gpodder.net archive: it grows to more than 500 times its size once decompressed (a decompression bomb)',
    );
    // Within the ratio it is an archive with no podcasts.
    expect(await fileOf(bomb, { ...limits, maxRatio: 100_000 })).toMatchObject({ subscribed: [], devices: [] });
    expect(await everything(u)).toMatchObject({ opa: [], actions: [], devices: [] });
  });
});
