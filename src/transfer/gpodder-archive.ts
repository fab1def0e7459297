import { Readable } from 'node:stream';
import { Decompress } from 'fzstd';
import tar from 'tar-stream';
import type { Config } from '../config';
import { InvalidInput } from '../errors';
import * as episodes from '../episodes/service';
import type { Brought } from './import';
import { drain, NotJson, readJson, type JsonPath, type JsonReader, type OnValue } from './json-stream';
import type { Snapshot } from './sources';
import { localFile, type FileBytes } from './uploads';
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
  /** Bytes one member of the tar may hold (its header says, before a byte of it is read). */
  maxMemberBytes: number;
  /** How many times its compressed size the archive may grow to once decompressed: a bomb stops early. */
  maxRatio: number;
};

/** The limits the server's settings give (GPODDER_ARCHIVE_*, docs/configuration.md). */
export const gpodderArchiveLimits = (config: Config): ArchiveLimits => ({
  maxBytes: config.gpodderArchiveMaxBytes,
  maxEntries: config.gpodderArchiveMaxEntries,
  maxMemberBytes: config.gpodderArchiveMaxMember,
  maxRatio: config.gpodderArchiveMaxRatio,
});

const ZSTD_MAGIC = [0x28, 0xb5, 0x2f, 0xfd];
const isZstd = (b: Uint8Array) => ZSTD_MAGIC.every((x, i) => b[i] === x);
const isTar = (b: Uint8Array) => Buffer.from(b.subarray(257, 262)).toString('latin1') === 'ustar';

const refuse = (why: string) => new InvalidInput(`Not a gpodder.net archive: ${why}`);

const neither = () => refuse('it is neither zstd-compressed nor a tar file');

/** Refuses a file whose first bytes cannot begin a gpodder.net archive (zstd, or a tar): a cheap look, no more. */
export function checkGpodderArchiveStart(head: Uint8Array): void {
  if (head.length === 0) throw refuse('the file is empty');
  if (!isZstd(head) && !(head.length >= 262 && isTar(head))) throw neither();
}

/** Decompressed bytes the ratio does not count: a small archive's tar padding grows more than its data. */
const RATIO_FREE = 1024 * 1024;

/**
 * At most about this many decompressed bytes are made before they are handed on: the decoder gets the
 * compressed bytes in slices of this over the ratio (16 KiB at the default 500), and may make no more of a
 * slice than the ratio allows (a zstd block that repeats one byte makes 128 KiB of 3 bytes).
 */
const STEP = 8 * 1024 * 1024;
const sliceOf = (limits: ArchiveLimits) => Math.max(64, Math.floor(STEP / limits.maxRatio));

/** A zstd decoder whose output is counted against the limits as it comes, block by block. */
function zstdDecoder(limits: ArchiveLimits, out: Uint8Array[]) {
  let total = 0;
  let compressed = 0;
  const zstd = new Decompress((data) => {
    total += data.length;
    if (total > limits.maxBytes) throw refuse(`it holds more than ${limits.maxBytes} bytes once decompressed`);
    if (total > RATIO_FREE && total > limits.maxRatio * compressed) {
      throw refuse(`it grows to more than ${limits.maxRatio} times its size once decompressed (a decompression bomb)`);
    }
    out.push(data);
  });
  // Every frame's window is checked before the decoder allocates it (src/transfer/zstd-frames.ts).
  const guard = windowGuard();
  return (data: Uint8Array, final = false) => {
    guard(data);
    compressed += data.length;
    try {
      zstd.push(data, final);
    } catch (err) {
      if (err instanceof InvalidInput) throw err;
      throw refuse(`the zstd data is damaged or ends too early (${(err as Error).message})`);
    }
  };
}

/** The archive's bytes as the tar holds them: decompressed if it is zstd, as they are if it is a tar. */
async function* tarBytes(
  input: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  limits: ArchiveLimits,
): AsyncGenerator<Uint8Array> {
  let head: Uint8Array = new Uint8Array(0);
  let kind: 'zstd' | 'tar' | undefined;
  let total = 0;
  const out: Uint8Array[] = [];
  const push = zstdDecoder(limits, out);
  const slice = sliceOf(limits);
  for await (const chunk of input) {
    let data: Uint8Array = chunk;
    if (!kind) {
      // Known by its first bytes: zstd's magic number, or "ustar" where a tar header has it.
      head = Buffer.concat([head, chunk]);
      if (head.length >= 4 && isZstd(head)) kind = 'zstd';
      else if (head.length >= 262) kind = isTar(head) ? 'tar' : undefined;
      if (!kind && head.length >= 262) throw neither();
      if (!kind) continue;
      data = head;
    }
    if (kind === 'tar') {
      total += data.length;
      if (total > limits.maxBytes) throw refuse(`it holds more than ${limits.maxBytes} bytes once decompressed`);
      yield data;
      continue;
    }
    for (let at = 0; at < data.length; at += slice) {
      push(data.subarray(at, at + slice));
      yield* out.splice(0);
    }
  }
  if (!kind) throw head.length === 0 ? refuse('the file is empty') : neither();
  if (kind === 'zstd') {
    push(new Uint8Array(0), true);
    yield* out.splice(0);
  }
}

/** How a member castsync reads is read: which of its containers are split, what is done with each value. */
type MemberReader = { split: (path: JsonPath) => boolean; onValue: OnValue; ended?: (reader: JsonReader) => void };

/** The most characters one value of a member may span while it is kept (an episode with its history, a podcast's details). */
export const MAX_VALUE_CHARS = 16 * 1024 * 1024;

/** One member, read as it streams: its JSON values go to `read`, and what is `ready` is handed on as it fills. */
async function* readMember(name: string, entry: AsyncIterable<Uint8Array>, read: MemberReader, ready: unknown[]) {
  const options = { split: read.split, maxValueChars: MAX_VALUE_CHARS, name };
  try {
    // (Read first: `ended?.(…)` would skip reading the member when there is no `ended`.)
    const reader = yield* readJson(entry, options, read.onValue, ready, episodes.MAX_ACTIONS);
    read.ended?.(reader);
  } catch (err) {
    if (err instanceof NotJson) throw refuse(err.message);
    throw err;
  }
}

/**
 * Reads the archive's members as they stream: each member `readerOf` gives a reader for is read with it,
 * the others are skipped. Batches of what the readers put in `ready` (at most MAX_ACTIONS each) are handed
 * on as they fill. A member over the limit is refused by its header, before it is read.
 */
async function* readMembers(
  input: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  limits: ArchiveLimits,
  readerOf: (name: string) => MemberReader | undefined,
  ready: unknown[],
): AsyncGenerator<unknown[]> {
  const extract = tar.extract();
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
      if (entry.header.size !== undefined && entry.header.size > limits.maxMemberBytes) {
        throw refuse(`its member ${name} holds more than ${limits.maxMemberBytes} bytes once decompressed`);
      }
      const read = entry.header.type === 'file' ? readerOf(name) : undefined;
      if (read) yield* readMember(name, entry as AsyncIterable<Uint8Array>, read, ready);
      else entry.resume();
    }
  } catch (err) {
    source.destroy();
    if (err instanceof InvalidInput) throw err;
    if (failed instanceof InvalidInput) throw failed;
    throw refuse(`the tar is damaged or truncated (${(err as Error).message})`);
  }
  if (failed) throw failed;
  if (ready.length > 0) yield ready.splice(0);
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

/** gpodder.net's device type: castsync has the same ones (one it does not know is stored as "other"). */
const typeOf = (t: unknown) => (typeof t === 'string' ? t : 'other');

/** The live devices of clients.json (in its groups; `deleted` lists the deleted ones). */
function devicesOf(clients: unknown): Snapshot['devices'] {
  const groups = (clients as { groups?: { devices?: ArchiveDevice[] }[] } | undefined)?.groups;
  if (!Array.isArray(groups)) return [];
  return groups
    .flatMap((g) => (Array.isArray(g.devices) ? g.devices : []))
    .filter((d) => str(d.uid))
    .map((d) => ({ id: str(d.uid)!, caption: str(d.name) ?? str(d.uid)!, type: typeOf(d.type) }));
}

/** The device of its own an entry's client UUID becomes when the archive does not say which live device it is. */
function uuidDevice(uuid: string): Snapshot['devices'][number] {
  const short = uuid
    .replace(/[^0-9a-f]/gi, '')
    .slice(0, 8)
    .toLowerCase();
  return { id: `gpodder.net-${short}`, caption: `gpodder.net history of device ${uuid}`, type: 'other' };
}

/**
 * The device an entry's client UUID becomes: the one live device when the file has exactly one (the
 * mapping is then certain), else a device of the UUID's own (the archive does not say which live device a
 * UUID is, and castsync does not guess).
 */
function deviceOf(live: Snapshot['devices'], client: unknown): string | undefined {
  const uuid = str(client);
  if (!uuid) return undefined;
  return live.length === 1 ? live[0]!.id : uuidDevice(uuid).id;
}

/** The most client UUIDs an archive may name (gpodder.net's accounts have a few devices). */
const MAX_CLIENTS = 1000;

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

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const listOf = <T>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);

/** subscriptions.json is read a podcast's details and an episode at a time: its list and each podcast's episodes are split. */
const splitPodcasts = (path: JsonPath) => path.length === 0 || (path.length === 2 && path[1] === 'episodes');
const isEpisode = (path: JsonPath) => path.length === 3;

/** What the first reading of an archive finds: everything but the actions, which it counts. */
type Survey = {
  live: Snapshot['devices'];
  clients: Set<string>;
  subscribed: Set<string>;
  removed: Set<string>;
  entries: number;
  podcasts: boolean;
};

/** A podcast's details: its URL, current (a live `by_client` row) or removed. */
function notePodcast(p: ArchivePodcast, into: Survey) {
  const rows = listOf<{ deleted?: unknown; ref_url?: unknown }>(p.by_client).filter(isObject);
  const current = rows.find((c) => c.deleted === false);
  const url = firstUrl(p.urls) ?? str(current?.ref_url) ?? str(rows[0]?.ref_url);
  if (url) (current ? into.subscribed : into.removed).add(url);
}

/** An episode's history entries: counted, their clients noted. */
function noteEpisode(e: ArchiveEpisode, limits: ArchiveLimits, into: Survey) {
  for (const h of listOf<unknown>(e.history)) {
    if (++into.entries > limits.maxEntries)
      throw refuse(`it holds more than ${limits.maxEntries} episode history entries`);
    const uuid = isObject(h) ? str(h.client) : undefined;
    if (uuid) into.clients.add(uuid);
    if (into.clients.size > MAX_CLIENTS) throw refuse(`its history names more than ${MAX_CLIENTS} devices`);
  }
}

/** The first reading: every member castsync reads, parsed and checked, the actions counted, nothing kept of them. */
async function survey(input: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, limits: ArchiveLimits) {
  const found: Survey = {
    live: [],
    clients: new Set(),
    subscribed: new Set(),
    removed: new Set(),
    entries: 0,
    podcasts: false,
  };
  const whole = () => false;
  const readerOf = (name: string): MemberReader | undefined => {
    if (name === 'meta.json') return { split: whole, onValue: () => undefined };
    if (name === 'clients.json') return { split: whole, onValue: (_path, v) => (found.live = devicesOf(v)) };
    if (name !== 'subscriptions.json') return undefined;
    return {
      split: splitPodcasts,
      onValue: (path, v) => {
        if (!isObject(v)) return;
        if (isEpisode(path)) noteEpisode(v as ArchiveEpisode, limits, found);
        else if (path.length === 1) notePodcast(v as ArchivePodcast, found);
      },
      ended: (reader) => {
        if (reader.top !== 'array') throw refuse('subscriptions.json is not a list of podcasts');
        found.podcasts = true;
      },
    };
  };
  await drain(readMembers(input, limits, readerOf, []));
  if (!found.podcasts) throw refuse('it has no subscriptions.json');
  return found;
}

/** The second reading: every history entry of subscriptions.json as an action, a batch at a time. */
function actions(file: FileBytes, limits: ArchiveLimits, live: Snapshot['devices']): AsyncIterable<unknown[]> {
  const ready: unknown[] = [];
  const readerOf = (name: string): MemberReader | undefined =>
    name !== 'subscriptions.json'
      ? undefined
      : {
          split: splitPodcasts,
          onValue: (path, v, within) => {
            if (!isEpisode(path) || !isObject(v)) return;
            const podcast = (isObject(within) ? within : {}) as ArchivePodcast;
            for (const x of listOf<unknown>(v.history)) {
              // An entry that is not an object becomes an action castsync refuses, listed as the others.
              const h = isObject(x) ? x : {};
              ready.push(actionOf(h, podcast, v as ArchiveEpisode, deviceOf(live, h.client)));
            }
          },
        };
  return readMembers(file(), limits, readerOf, ready);
}

/**
 * Reads a gpodder.net archive (zstd or plain tar, recognised by its bytes) into what an import brings. It is
 * read twice as it streams, never whole: first all of it, checked and counted (a file castsync refuses is
 * refused here, before anything is written), then again for its actions, a batch at a time, as they are
 * stored.
 */
export async function readGpodderArchive(file: FileBytes, limits: ArchiveLimits): Promise<Brought> {
  const found = await survey(file(), limits);
  return {
    devices: [...found.live, ...(found.live.length === 1 ? [] : [...found.clients].map(uuidDevice))],
    subscribed: [...found.subscribed],
    removed: [...found.removed].filter((u) => !found.subscribed.has(u)),
    actions: { total: found.entries, batches: () => actions(file, limits, found.live) },
  };
}

/** readGpodderArchive of a file, read as it streams; a file that cannot be read says why. */
export const readGpodderArchiveFile = async (file: string, limits: ArchiveLimits): Promise<Brought> =>
  readGpodderArchive(await localFile(file), limits);
