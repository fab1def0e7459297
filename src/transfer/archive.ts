import { z } from 'zod';
import type { Db } from '../db/pool';
import * as devices from '../devices/service';
import * as episodes from '../episodes/service';
import * as queue from '../queue/service';
import * as subscriptions from '../subscriptions/service';
import { importSnapshot, part, refuse, type Brought, type Summary } from './import';
import { parseCleanJson } from '../text';
import { isRefusal } from '../errors';
import { drain, NotJson, readJson, type JsonPath, type JsonReaderOptions, type OnValue } from './json-stream';
import type { FileBytes } from './uploads';
import { ImportFailed } from './remote';
import type { Progress } from './sources';

// The archive: one JSON document with everything castsync keeps for a user, to leave with or to restore
// into another castsync (docs/moving.md describes the format).

export const ARCHIVE_FORMAT = 'castsync-archive';
export const ARCHIVE_VERSION = 1;

const iso = z.iso.datetime({ offset: true });
const archiveSchema = z.object({
  format: z.literal(ARCHIVE_FORMAT),
  version: z.literal(ARCHIVE_VERSION),
  exported_at: iso,
  user: z.string(),
  devices: z.array(z.object({ id: z.string(), caption: z.string(), type: z.string() })),
  subscriptions: z.array(
    z.object({
      feed_url: z.string(),
      guid: z.string(),
      is_subscribed: z.boolean(),
      subscription_changed: iso,
      guid_changed: iso.nullable(),
      other_urls: z.array(z.string()),
      earlier_guids: z.array(z.string()),
    }),
  ),
  // Episode actions in the gpodder.net format, with the time in milliseconds and Z.
  episode_actions: z.array(z.record(z.string(), z.unknown())),
  // Since 1.1.0; an older archive has none.
  favourites: z
    .array(
      z.object({
        podcast_url: z.string(),
        enclosure_url: z.string(),
        episode_guid: z.string().nullable(),
        favourite: z.boolean(),
        at: iso,
      }),
    )
    .default([]),
  queue: z
    .array(z.object({ podcast_url: z.string(), enclosure_url: z.string(), episode_guid: z.string().nullable() }))
    .default([]),
});

/** How much of what a person keeps an import may bring (the server's bounds). */
export type KeepLimits = { maxFavourites: number; maxQueueItems: number };

/** The defaults of FAVOURITES_MAX and QUEUE_MAX_ITEMS. */
export const DEFAULT_KEEP: KeepLimits = { maxFavourites: 10_000, maxQueueItems: 1000 };

export type Archive = z.infer<typeof archiveSchema>;

/** What an archive holds, counted. */
export type Counts = { subscriptions: number; actions: number; devices: number; favourites: number; queue: number };

/** An archive as a file holds it (what `castsync export` writes). */
export const archiveText = (a: Archive): string => JSON.stringify(a, null, 2) + '\n';

/** An archive's episode action, in the gpodder.net format. */
function actionOf(a: episodes.StoredAction): Archive['episode_actions'][number] {
  return {
    podcast: a.podcastUrl,
    episode: a.episodeUrl,
    ...(a.guid !== undefined && { guid: a.guid }),
    action: a.action,
    timestamp: a.at.toISOString(),
    ...(a.device !== undefined && { device: a.device }),
    ...(a.started !== undefined && { started: a.started }),
    ...(a.position !== undefined && { position: a.position }),
    ...(a.total !== undefined && { total: a.total }),
  };
}

/** How many actions an archive reads and writes at a time. */
const ACTION_PAGE = 500;

/** `value` as JSON.stringify(…, null, 2) writes it `depth` levels down in a document. */
const nested = (value: unknown, depth: number) =>
  JSON.stringify(value, null, 2).replaceAll('\n', '\n' + '  '.repeat(depth));
const member = (key: string, value: unknown) => `  ${JSON.stringify(key)}: ${nested(value, 1)}`;

/**
 * Everything castsync keeps for the user, as the archive's text (`archiveText` of the archive): devices,
 * subscription records with their history, episode actions, favourites (cleared ones too, so that a restore
 * keeps what was cleared) and Up next. It comes in pieces, the actions a page at a time as they are read,
 * so that a big history is never whole in memory (the web's download streams it); what it returns is the
 * count of each part.
 */
export async function* archivePieces(
  db: Db,
  userId: number,
  username: string,
  exportedAt = new Date(),
): AsyncGenerator<string, Counts> {
  const records = await subscriptions.archivedRecords(db, userId);
  const owned = (await devices.list(db, userId)).map((d) => ({ id: d.id, caption: d.caption, type: d.type }));
  const head = [
    member('format', ARCHIVE_FORMAT),
    member('version', ARCHIVE_VERSION),
    member('exported_at', exportedAt.toISOString()),
    member('user', username),
    member('devices', owned),
    member(
      'subscriptions',
      records.map((r) => ({
        feed_url: r.feedUrl,
        guid: r.guid,
        is_subscribed: r.subscribed,
        subscription_changed: r.subscriptionChanged.toISOString(),
        guid_changed: r.guidChanged?.toISOString() ?? null,
        other_urls: r.otherUrls,
        earlier_guids: r.earlierGuids,
      })),
    ),
  ];
  yield `{\n${head.join(',\n')},\n  "episode_actions": [`;
  let actions = 0;
  let after: episodes.HistoryCursor | undefined;
  do {
    const found = await episodes.history(db, userId, after, ACTION_PAGE);
    after = found.next;
    const page = found.actions.map((a) => `\n    ${nested(actionOf(a), 2)}`).join(',');
    if (page !== '') yield (actions === 0 ? '' : ',') + page;
    actions += found.actions.length;
  } while (after !== undefined);
  const kept = await keptOf(db, userId);
  yield `${actions === 0 ? '' : '\n  '}],\n${member('favourites', kept.favourites)},\n${member('queue', kept.queue)}\n}\n`;
  return {
    subscriptions: records.length,
    actions,
    devices: owned.length,
    favourites: kept.favourites.length,
    queue: kept.queue.length,
  };
}

/** The whole text of an archive, and its counts. */
export async function archiveTextOf(
  db: Db,
  userId: number,
  username: string,
): Promise<{ text: string; counts: Counts }> {
  const pieces = archivePieces(db, userId, username);
  let text = '';
  for (;;) {
    const next = await pieces.next();
    if (next.done) return { text, counts: next.value };
    text += next.value;
  }
}

/** Everything castsync keeps for the user, as an archive (read back from its text). */
export const exportArchive = async (db: Db, userId: number, username: string): Promise<Archive> =>
  parseArchive((await archiveTextOf(db, userId, username)).text);

/** The user's favourites (cleared ones too) and Up next, as the archive holds them. */
async function keptOf(db: Db, userId: number): Promise<Pick<Archive, 'favourites' | 'queue'>> {
  return {
    favourites: (await episodes.archivedFavourites(db, userId)).map((f) => ({
      podcast_url: f.podcastUrl,
      enclosure_url: f.enclosureUrl,
      episode_guid: f.episodeGuid,
      favourite: f.favourite,
      at: f.at.toISOString(),
    })),
    queue: (await queue.read(db, userId)).items.map((i) => ({
      podcast_url: i.podcastUrl,
      enclosure_url: i.enclosureUrl,
      episode_guid: i.episodeGuid,
    })),
  };
}

/** The archive's refusal of text that is not JSON, with the reader's reason when it has one. */
const notJson = (why?: string) =>
  new ImportFailed(`This is not a castsync archive: it is not JSON${why === undefined ? '' : ` (${why})`}`);

/** Refuses a file whose first bytes cannot begin an archive (a JSON object): a cheap look, no more. */
export function checkArchiveStart(head: Uint8Array): void {
  const text = Buffer.from(head)
    .toString('utf8')
    .replace(/^\ufeff/, '')
    .trimStart();
  if (text !== '' && !text.startsWith('{')) throw notJson();
}

/** Reads an archive's text: a clear error, before anything is written, if it is not one this castsync reads. */
export function parseArchive(text: string): Archive {
  let doc: unknown;
  try {
    // Someone else's file: text that cannot be stored loses that character, never the import.
    doc = parseCleanJson(text);
  } catch {
    throw notJson();
  }
  return checked(doc, archiveSchema);
}

/** The document as an archive of a version this castsync reads, checked against `schema`, or why not. */
function checked<T>(doc: unknown, schema: z.ZodType<T>): T {
  const head = doc as { format?: unknown; version?: unknown } | null;
  if (typeof head !== 'object' || head === null || head.format !== ARCHIVE_FORMAT) {
    throw new ImportFailed('This is not a castsync archive (the "format" field is not "castsync-archive")');
  }
  if (typeof head.version === 'number' && head.version > ARCHIVE_VERSION) {
    throw new ImportFailed(
      `This archive is of format version ${head.version}, newer than this castsync reads (${ARCHIVE_VERSION}): upgrade castsync to import it`,
    );
  }
  const r = schema.safeParse(doc);
  if (!r.success) throw damaged(r.error.issues[0]);
  return r.data;
}

const damaged = (issue: z.core.$ZodIssue | undefined, at: PropertyKey[] = []) =>
  new ImportFailed(
    `This castsync archive is damaged at ${[...at, ...(issue?.path ?? [])].map(String).join('.') || 'its top'}: ${issue?.message}`,
  );

/** An archive whose actions are read again from its file, a batch at a time, as they are stored. */
export type StreamedArchive = Omit<Archive, 'episode_actions'> & { episode_actions: Brought['actions'] };

/** The most characters one value of an archive may span while it is kept (the subscriptions, an action). */
export const MAX_ARCHIVE_VALUE_CHARS = 16 * 1024 * 1024;

const actionSchema = archiveSchema.shape.episode_actions.element;
const isAction = (path: JsonPath) => path.length === 2 && path[0] === 'episode_actions';
const readerOptions = {
  name: 'The archive',
  split: (path: JsonPath) => path.length === 0 || (path.length === 1 && path[0] === 'episode_actions'),
  maxValueChars: MAX_ARCHIVE_VALUE_CHARS,
};

/** Reads an archive file as it streams (never whole), NotJson as the archive's refusal. */
async function* readArchiveJson(file: FileBytes, options: JsonReaderOptions, onValue: OnValue, ready: unknown[] = []) {
  try {
    return yield* readJson(file(), options, onValue, ready, episodes.MAX_ACTIONS);
  } catch (err) {
    throw err instanceof NotJson ? notJson(err.message.replace(/^.* is not JSON: /, '')) : err;
  }
}

/**
 * Reads an archive file twice as it streams, never whole: first all of it, checked as parseArchive checks
 * (a file that is not an archive is refused here, before anything is written), keeping all but the
 * actions, which it counts; then again for the actions, a batch at a time, as they are stored.
 */
export async function readArchive(file: FileBytes): Promise<StreamedArchive> {
  const head: Record<string, unknown> = {};
  let total = 0;
  let bad: ImportFailed | undefined;
  const onValue: OnValue = (path, v) => {
    if (path.length === 1) head[path[0] as string] = v;
    if (!isAction(path)) return;
    total++;
    const r = bad ? undefined : actionSchema.safeParse(v);
    if (r && !r.success) bad = damaged(r.error.issues[0], path as PropertyKey[]);
  };
  // A split list is never handed out: what it was is noted (an object there is damage the check names).
  const opened = (path: JsonPath, array: boolean) => path.length === 1 && (head[path[0]!] = array ? [] : {});
  const reader = await drain(readArchiveJson(file, { ...readerOptions, opened }, onValue));
  const archive = checked(reader.top === 'object' ? head : undefined, archiveSchema);
  if (bad) throw bad;
  return { ...archive, episode_actions: { total, batches: () => actionsOf(file) } };
}

/** The archive's actions, read again, in batches. */
async function* actionsOf(file: FileBytes): AsyncGenerator<unknown[]> {
  const ready: unknown[] = [];
  const onValue: OnValue = (path, v) => void (isAction(path) && ready.push(actionSchema.parse(v)));
  yield* readArchiveJson(file, readerOptions, onValue, ready);
  if (ready.length > 0) yield ready;
}

/** The archive's favourites (the later time wins over what the user has) and Up next (added at the end). */
async function restoreKept(db: Db, userId: number, archive: Pick<Archive, 'favourites' | 'queue'>, keep: KeepLimits) {
  const named = (x: { podcast_url: string; enclosure_url: string; episode_guid: string | null }) => ({
    podcastUrl: x.podcast_url,
    enclosureUrl: x.enclosure_url,
    episodeGuid: x.episode_guid,
  });
  const resolved = await episodes.resolveEpisodes(db, userId, archive.favourites.map(named));
  const changes = archive.favourites.flatMap((f, index) => {
    const episode = resolved[index]!;
    return isRefusal(episode) ? [] : [{ episode, value: f.favourite, at: new Date(f.at), index }];
  });
  await episodes.changeFavourites(db, userId, changes, keep.maxFavourites);
  await queue.append(db, userId, archive.queue.map(named), { maxItems: keep.maxQueueItems });
}

/**
 * Restores an archive into a local user: the records with their history (as they were), then the devices
 * and the actions through the import's steps. What the user already has stays as it is; restoring twice
 * adds nothing; with `dryRun` nothing is written.
 */
export async function importArchive(
  db: Db,
  userId: number,
  archive: Archive | StreamedArchive,
  { dryRun, progress, keep }: { dryRun: boolean; progress: Progress; keep: KeepLimits },
): Promise<Summary> {
  progress('restoring subscriptions', 0, archive.subscriptions.length);
  const restored = await subscriptions.restoreRecords(
    db,
    userId,
    archive.subscriptions.map((s) => ({
      feedUrl: s.feed_url,
      guid: s.guid,
      subscribed: s.is_subscribed,
      subscriptionChanged: new Date(s.subscription_changed),
      guidChanged: s.guid_changed === null ? null : new Date(s.guid_changed),
      otherUrls: s.other_urls,
      earlierGuids: s.earlier_guids,
    })),
    { dryRun },
  );
  const summary = await importSnapshot(
    db,
    userId,
    { devices: archive.devices, subscribed: [], removed: [], actions: archive.episode_actions },
    { dryRun, progress },
  );
  if (!dryRun) await restoreKept(db, userId, archive, keep);
  summary.feeds = {
    ...part(archive.subscriptions.length),
    added: restored.created.length,
    sample: restored.created.slice(0, 5).map((r) => r.feedUrl + (r.subscribed ? '' : ' (unsubscribed)')),
    removedOnRemote: 0,
  };
  for (const x of restored.refused) refuse(summary.feeds, x.record.feedUrl, x.reason);
  return summary;
}
