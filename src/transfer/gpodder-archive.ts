import fs from 'node:fs';
import { Readable } from 'node:stream';
import { Decompress } from 'fzstd';
import tar from 'tar-stream';
import { InvalidInput } from '../errors';
import { parseCleanJson } from '../text';
import type { Snapshot } from './sources';
import { windowGuard } from './zstd-frames';

// The archive gpodder.net gives its users (and wrote for every account it archived): one zstd frame
// holding a GNU tar of JSON files, written by mygpo's `archive` command (docs/moving.md). What castsync
// takes from it: the current subscriptions (subscriptions.json's podcasts with a live `by_client` row;
// the OPML lists deleted devices' feeds too), every episode history entry, and the live devices
// (clients.json). It becomes a Snapshot, imported like another server's (src/transfer/import.ts).

export type ArchiveLimits = {
  /** Bytes the archive may hold once decompressed: a zstd bomb stops here. */
  maxBytes: number;
  /** Episode history entries it may hold. */
  maxEntries: number;
};

const ZSTD_MAGIC = [0x28, 0xb5, 0x2f, 0xfd];
const isZstd = (b: Uint8Array) => ZSTD_MAGIC.every((x, i) => b[i] === x);
const isTar = (b: Uint8Array) => Buffer.from(b.subarray(257, 262)).toString('latin1') === 'ustar';

const refuse = (why: string) => new InvalidInput(`Not a gpodder.net archive: ${why}`);

/** The archive's bytes as the tar holds them: decompressed if it is zstd, as they are if it is a tar. */
async function* tarBytes(
  input: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  limits: ArchiveLimits,
): AsyncGenerator<Uint8Array> {
  let head: Uint8Array = new Uint8Array(0);
  let kind: 'zstd' | 'tar' | undefined;
  let total = 0;
  const out: Uint8Array[] = [];
  const count = (n: number) => {
    total += n;
    if (total > limits.maxBytes) throw refuse(`it holds more than ${limits.maxBytes} bytes once decompressed`);
  };
  const zstd = new Decompress((data) => {
    count(data.length);
    out.push(data);
  });
  // Every frame's window is checked before the decoder allocates it (src/transfer/zstd-frames.ts).
  const guard = windowGuard();
  const push = (data: Uint8Array, final = false) => {
    guard(data);
    try {
      zstd.push(data, final);
    } catch (err) {
      if (err instanceof InvalidInput) throw err;
      throw refuse(`the zstd data is damaged or ends too early (${(err as Error).message})`);
    }
  };
  for await (const chunk of input) {
    let data: Uint8Array = chunk;
    if (!kind) {
      // Known by its first bytes: zstd's magic number, or "ustar" where a tar header has it.
      head = Buffer.concat([head, chunk]);
      if (head.length >= 4 && isZstd(head)) kind = 'zstd';
      else if (head.length >= 262) kind = isTar(head) ? 'tar' : undefined;
      if (!kind && head.length >= 262) throw refuse('it is neither zstd-compressed nor a tar file');
      if (!kind) continue;
      data = head;
    }
    if (kind === 'tar') {
      count(data.length);
      yield data;
      continue;
    }
    push(data);
    yield* out.splice(0);
  }
  if (!kind) throw refuse(head.length === 0 ? 'the file is empty' : 'it is neither zstd-compressed nor a tar file');
  if (kind === 'zstd') {
    push(new Uint8Array(0), true);
    yield* out.splice(0);
  }
}

/** The members castsync reads, by name; the others are skipped as they stream by. */
const WANTED = new Set(['meta.json', 'clients.json', 'subscriptions.json']);

/** The JSON members castsync reads, parsed (a third party's text: what PostgreSQL cannot store is removed). */
async function members(
  input: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  limits: ArchiveLimits,
): Promise<Map<string, unknown>> {
  const extract = tar.extract();
  const found = new Map<string, unknown>();
  const source = Readable.from(tarBytes(input, limits));
  let failed: unknown;
  source.on('error', (err) => {
    failed = err;
    extract.destroy(err);
  });
  source.pipe(extract);
  try {
    for await (const entry of extract) {
      const name = entry.header.name.replace(/^\.\//, '');
      if (!WANTED.has(name) || entry.header.type !== 'file') {
        entry.resume();
        continue;
      }
      const parts: Buffer[] = [];
      for await (const part of entry) parts.push(part as Buffer);
      try {
        found.set(name, parseCleanJson(Buffer.concat(parts).toString('utf8')));
      } catch (err) {
        throw refuse(`${name} is ${(err as InvalidInput).reason}`);
      }
    }
  } catch (err) {
    if (err instanceof InvalidInput) throw err;
    if (failed instanceof InvalidInput) throw failed;
    throw refuse(`the tar is damaged or truncated (${(err as Error).message})`);
  }
  if (failed) throw failed;
  return found;
}

type ArchivePodcast = {
  urls?: unknown;
  by_client?: { deleted?: unknown; ref_url?: unknown }[];
  episodes?: ArchiveEpisode[];
};
type ArchiveEpisode = { guid?: unknown; urls?: unknown; history?: Record<string, unknown>[] };
type ArchiveDevice = { uid?: unknown; name?: unknown; type?: unknown };

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const firstUrl = (urls: unknown): string | undefined => (Array.isArray(urls) ? str(urls[0]) : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** gpodder.net's device types; a tablet is a mobile device here. */
const typeOf = (t: unknown) => (t === 'tablet' ? 'mobile' : typeof t === 'string' ? t : 'other');

/** The live devices of clients.json (in its groups; `deleted` lists the deleted ones). */
function devicesOf(clients: unknown): Snapshot['devices'] {
  const groups = (clients as { groups?: { devices?: ArchiveDevice[] }[] } | undefined)?.groups;
  if (!Array.isArray(groups)) return [];
  return groups
    .flatMap((g) => (Array.isArray(g.devices) ? g.devices : []))
    .filter((d) => str(d.uid))
    .map((d) => ({ id: str(d.uid)!, caption: str(d.name) ?? str(d.uid)!, type: typeOf(d.type) }));
}

/**
 * The device an entry's client UUID becomes: the one live device when the file has exactly one (the
 * mapping is then certain), else a device of the UUID's own (the archive does not say which live device a
 * UUID is, and castsync does not guess).
 */
function deviceFor(live: Snapshot['devices'], uuids: Map<string, Snapshot['devices'][number]>) {
  return (client: unknown): string | undefined => {
    const uuid = str(client);
    if (!uuid) return undefined;
    if (live.length === 1) return live[0]!.id;
    let d = uuids.get(uuid);
    if (!d) {
      const short = uuid
        .replace(/[^0-9a-f]/gi, '')
        .slice(0, 8)
        .toLowerCase();
      d = { id: `gpodder.net-${short}`, caption: `gpodder.net history of device ${uuid}`, type: 'other' };
      uuids.set(uuid, d);
    }
    return d.id;
  };
}

/** One history entry in the gpodder.net action format; fields the entry lacks are left out. */
function actionOf(h: Record<string, unknown>, podcast: ArchivePodcast, e: ArchiveEpisode, device?: string) {
  const action = str(h.action);
  return {
    podcast: str(h.podcast_ref_url) ?? firstUrl(podcast.urls),
    episode: str(h.episode_ref_url) ?? firstUrl(e.urls),
    ...(str(e.guid) && { guid: str(e.guid) }),
    action,
    // The entry's own time (never `created`, the server's receipt): naive ISO, UTC.
    timestamp: str(h.timestamp),
    ...(device && { device }),
    ...(action === 'play' && {
      ...(num(h.started) !== undefined && { started: num(h.started) }),
      ...(num(h.stopped) !== undefined && { position: num(h.stopped) }),
      ...(num(h.total) !== undefined && { total: num(h.total) }),
    }),
  };
}

/** Reads a gpodder.net archive (zstd or plain tar, recognised by its bytes) into what an import brings. */
export async function readGpodderArchive(
  input: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  limits: ArchiveLimits,
): Promise<Snapshot> {
  const found = await members(input, limits);
  const podcasts = found.get('subscriptions.json');
  if (podcasts === undefined) throw refuse('it has no subscriptions.json');
  if (!Array.isArray(podcasts)) throw refuse('subscriptions.json is not a list of podcasts');
  const live = devicesOf(found.get('clients.json'));
  const byUuid = new Map<string, Snapshot['devices'][number]>();
  const device = deviceFor(live, byUuid);
  const subscribed = new Set<string>();
  const removed = new Set<string>();
  const actions: unknown[] = [];
  for (const p of podcasts as ArchivePodcast[]) {
    const rows = Array.isArray(p.by_client) ? p.by_client : [];
    const current = rows.find((c) => c.deleted === false);
    const url = firstUrl(p.urls) ?? str(current?.ref_url) ?? str(rows[0]?.ref_url);
    if (url) (current ? subscribed : removed).add(url);
    for (const e of Array.isArray(p.episodes) ? p.episodes : []) {
      for (const h of Array.isArray(e.history) ? e.history : []) {
        if (actions.length >= limits.maxEntries)
          throw refuse(`it holds more than ${limits.maxEntries} episode history entries`);
        actions.push(actionOf(h, p, e, device(h.client)));
      }
    }
  }
  return {
    devices: [...live, ...byUuid.values()],
    subscribed: [...subscribed],
    removed: [...removed].filter((u) => !subscribed.has(u)),
    actions,
  };
}

/** readGpodderArchive of a file, read as it streams; a file that cannot be read says why. */
export async function readGpodderArchiveFile(file: string, limits: ArchiveLimits): Promise<Snapshot> {
  try {
    await fs.promises.access(file, fs.constants.R_OK);
  } catch (err) {
    throw new InvalidInput(`Cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return readGpodderArchive(fs.createReadStream(file), limits);
}
