import { z } from 'zod';
import type { Db } from '../db/pool';
import * as devices from '../devices/service';
import * as episodes from '../episodes/service';
import * as subscriptions from '../subscriptions/service';
import { importSnapshot, type Summary } from './import';
import { parseCleanJson } from '../text';
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
});

export type Archive = z.infer<typeof archiveSchema>;

/** Everything castsync keeps for the user: devices, subscription records with their history, episode actions. */
export async function exportArchive(db: Db, userId: number, username: string): Promise<Archive> {
  const records = await subscriptions.archivedRecords(db, userId);
  const actions: Archive['episode_actions'] = [];
  const perPage = 5000;
  for (let page = 1; ; page++) {
    const found = await episodes.page(db, userId, { page, perPage });
    for (const a of found.actions) {
      actions.push({
        podcast: a.podcastUrl,
        episode: a.episodeUrl,
        ...(a.guid !== undefined && { guid: a.guid }),
        action: a.action,
        timestamp: a.at.toISOString(),
        ...(a.device !== undefined && { device: a.device }),
        ...(a.started !== undefined && { started: a.started }),
        ...(a.position !== undefined && { position: a.position }),
        ...(a.total !== undefined && { total: a.total }),
      });
    }
    if (found.actions.length < perPage) break;
  }
  return {
    format: ARCHIVE_FORMAT,
    version: ARCHIVE_VERSION,
    exported_at: new Date().toISOString(),
    user: username,
    devices: (await devices.list(db, userId)).map((d) => ({ id: d.id, caption: d.caption, type: d.type })),
    subscriptions: records.map((r) => ({
      feed_url: r.feedUrl,
      guid: r.guid,
      is_subscribed: r.subscribed,
      subscription_changed: r.subscriptionChanged.toISOString(),
      guid_changed: r.guidChanged?.toISOString() ?? null,
      other_urls: r.otherUrls,
      earlier_guids: r.earlierGuids,
    })),
    episode_actions: actions,
  };
}

/** Reads an archive's text: a clear error, before anything is written, if it is not one this castsync reads. */
export function parseArchive(text: string): Archive {
  let doc: unknown;
  try {
    // Someone else's file: text that cannot be stored loses that character, never the import.
    doc = parseCleanJson(text);
  } catch {
    throw new ImportFailed('This is not a castsync archive: it is not JSON');
  }
  const head = doc as { format?: unknown; version?: unknown } | null;
  if (typeof head !== 'object' || head === null || head.format !== ARCHIVE_FORMAT) {
    throw new ImportFailed('This is not a castsync archive (the "format" field is not "castsync-archive")');
  }
  if (typeof head.version === 'number' && head.version > ARCHIVE_VERSION) {
    throw new ImportFailed(
      `This archive is of format version ${head.version}, newer than this castsync reads (${ARCHIVE_VERSION}): upgrade castsync to import it`,
    );
  }
  const r = archiveSchema.safeParse(doc);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new ImportFailed(
      `This castsync archive is damaged at ${issue?.path.join('.') || 'its top'}: ${issue?.message}`,
    );
  }
  return r.data;
}

/**
 * Restores an archive into a local user: the records with their history (as they were), then the devices
 * and the actions through the import's steps. What the user already has stays as it is; restoring twice
 * adds nothing; with `dryRun` nothing is written.
 */
export async function importArchive(
  db: Db,
  userId: number,
  archive: Archive,
  { dryRun, progress }: { dryRun: boolean; progress: Progress },
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
  summary.feeds = {
    total: archive.subscriptions.length,
    added: restored.created.length,
    sample: restored.created.slice(0, 5).map((r) => r.feedUrl + (r.subscribed ? '' : ' (unsubscribed)')),
    refused: restored.refused.map((x) => ({ item: x.record.feedUrl, reason: x.reason })),
    removedOnRemote: 0,
  };
  return summary;
}
