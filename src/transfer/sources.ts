import { z } from 'zod';
import { ImportFailed, type RemoteServer } from './remote';

/** What another sync server holds for a user, as read from it. */
export type Snapshot = {
  /** The remote's devices (none for a Nextcloud). */
  devices: { id: string; caption: string; type: string }[];
  /** The union of the current subscriptions of every remote device, each URL once, as the remote has it. */
  subscribed: string[];
  /** URLs the remote says were removed and that no device has: not imported. */
  removed: string[];
  /** The whole episode-action history, in the gpodder.net format, as the remote gave it. */
  actions: unknown[];
};

/** What an import reports as it goes: a step, and how far it is. */
export type Progress = (step: string, done?: number, total?: number) => void;

export type Source = 'gpodder' | 'nextcloud';

/** At most this many devices are read: one request each. */
const MAX_DEVICES = 1000;

const urlList = z.array(z.string());
const changes = z.object({ add: urlList, remove: urlList.default([]) });
const actions = z.object({ actions: z.array(z.unknown()) });
const deviceList = z
  .array(
    z.object({
      id: z.string(),
      caption: z.string().nullish(),
      type: z.string().nullish(),
    }),
  )
  .max(MAX_DEVICES);
// The simple API's list: podcast objects (gpodder.net: url; opodsync: feed), or plain URLs.
const simpleList = z.array(
  z
    .union([z.string(), z.object({ url: z.string() }), z.object({ feed: z.string() })])
    .transform((x) => (typeof x === 'string' ? x : 'url' in x ? x.url : x.feed)),
);

/** A remote answer of the expected shape, or a clear error naming the request. */
async function read<T>(remote: RemoteServer, path: string, schema: z.ZodType<T>): Promise<T> {
  const body = await remote.json(path);
  const r = schema.safeParse(body);
  if (!r.success) {
    const issue = r.error.issues[0];
    const where = issue?.path.length ? ` at ${issue.path.join('.')}` : '';
    throw new ImportFailed(
      `${remote.address}${path} answered JSON of another shape than expected${where}: ${issue?.message}`,
    );
  }
  return r.data;
}

/** Adds the changes of one list to the union: added URLs in first-seen order, removed ones apart. */
function merge(into: { subscribed: Set<string>; removed: Set<string> }, list: { add: string[]; remove: string[] }) {
  for (const url of list.add) into.subscribed.add(url);
  for (const url of list.remove) into.removed.add(url);
}

function snapshotOf(
  devices: Snapshot['devices'],
  lists: { subscribed: Set<string>; removed: Set<string> },
  history: unknown[],
): Snapshot {
  return {
    devices,
    subscribed: [...lists.subscribed],
    removed: [...lists.removed].filter((u) => !lists.subscribed.has(u)),
    actions: history,
  };
}

/**
 * Reads a user of a gpodder.net v2 server (gpodder.net, opodsync, another castsync): logs in (a wrong
 * password ends here), lists the devices, reads each device's subscriptions since 0 (its current list),
 * and the whole episode-action history.
 */
export async function readGpodder(remote: RemoteServer, progress: Progress): Promise<Snapshot> {
  const user = encodeURIComponent(remote.user);
  progress('logging in');
  await remote.post(`/api/2/auth/${user}/login.json`);
  progress('reading devices');
  const devices = (await read(remote, `/api/2/devices/${user}.json`, deviceList)).map((d) => ({
    id: d.id,
    caption: d.caption || d.id,
    type: d.type ?? 'other',
  }));
  const lists = { subscribed: new Set<string>(), removed: new Set<string>() };
  for (const [i, d] of devices.entries()) {
    progress('reading subscriptions', i, devices.length);
    merge(lists, await read(remote, `/api/2/subscriptions/${user}/${encodeURIComponent(d.id)}.json?since=0`, changes));
  }
  if (devices.length === 0) {
    // No device to ask: the user's list from the simple API.
    progress('reading subscriptions');
    merge(lists, { add: await read(remote, `/subscriptions/${user}.json`, simpleList), remove: [] });
  }
  progress('reading episode actions');
  const history = (await read(remote, `/api/2/episodes/${user}.json?since=0`, actions)).actions;
  return snapshotOf(devices, lists, history);
}

/** Reads a user of a Nextcloud with the gpoddersync app (an app password works as the password). */
export async function readNextcloud(remote: RemoteServer, progress: Progress): Promise<Snapshot> {
  // The address may be given with Nextcloud's /index.php or without it.
  const app = `${remote.address.endsWith('/index.php') ? '' : '/index.php'}/apps/gpoddersync`;
  progress('reading subscriptions');
  const lists = { subscribed: new Set<string>(), removed: new Set<string>() };
  merge(lists, await read(remote, `${app}/subscriptions?since=0`, changes));
  progress('reading episode actions');
  const history = (await read(remote, `${app}/episode_action?since=0`, actions)).actions;
  return snapshotOf([], lists, history);
}

export const readers: Record<Source, (remote: RemoteServer, progress: Progress) => Promise<Snapshot>> = {
  gpodder: readGpodder,
  nextcloud: readNextcloud,
};
