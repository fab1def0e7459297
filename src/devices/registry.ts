import type { Queryable } from '../db/pool';
import { InvalidInput } from '../errors';

/** Device ids as clients make them (Kasts uses host names, with dots). */
export const DEVICE_ID = /^[A-Za-z0-9._-]{1,64}$/;
/** gpodder.net's device types, all of them (mygpo's `Client.TYPES` in mygpo/users/models.py). */
export const DEVICE_TYPES = ['desktop', 'laptop', 'mobile', 'server', 'tablet', 'other'] as const;
export type DeviceType = (typeof DEVICE_TYPES)[number];
export type Device = { id: string; caption: string; type: DeviceType; lastSeen: Date };

export function checkDeviceId(id: string): string {
  if (!DEVICE_ID.test(id)) throw new InvalidInput('Invalid device id: 1-64 characters of A-Z a-z 0-9 . _ -');
  return id;
}

/** When this process last wrote that a device was seen, by user and device. */
const lastWritten = new Map<string, number>();
const SEEN_EVERY_MS = 60_000;

/**
 * Notes that the device was seen, creating it (type other, caption its id) if the user had no device of
 * that name: naming a device in any route creates it, as on gpodder.net. At most one write a minute per
 * device from each process: a sync would otherwise cost a statement more than the same sync over /v1.
 */
export async function seen(db: Queryable, userId: number, deviceId: string): Promise<void> {
  const key = `${userId}/${checkDeviceId(deviceId)}`;
  const now = Date.now();
  if (now - (lastWritten.get(key) ?? 0) < SEEN_EVERY_MS) return;
  if (lastWritten.size >= 100_000) lastWritten.clear();
  await db.query(
    `INSERT INTO devices (user_id, device_id, caption) VALUES ($1, $2, $2)
     ON CONFLICT (user_id, device_id) DO UPDATE SET last_seen = now()
      WHERE devices.last_seen < now() - interval '1 minute'`,
    [userId, deviceId],
  );
  lastWritten.set(key, now);
}

/** Creates or updates a device; absent fields keep their value (a new device: caption = id, type other). */
export async function upsert(
  db: Queryable,
  userId: number,
  deviceId: string,
  set: { caption?: string | undefined; type?: string | undefined },
): Promise<void> {
  if (set.type !== undefined && !(DEVICE_TYPES as readonly string[]).includes(set.type)) {
    throw new InvalidInput(`Invalid device type: one of ${DEVICE_TYPES.join(', ')}`);
  }
  await db.query(
    `INSERT INTO devices (user_id, device_id, caption, type) VALUES ($1, $2, coalesce($3, $2), coalesce($4, 'other'))
     ON CONFLICT (user_id, device_id) DO UPDATE
       SET caption = coalesce($3, devices.caption), type = coalesce($4, devices.type), last_seen = now()`,
    [userId, checkDeviceId(deviceId), set.caption ?? null, set.type ?? null],
  );
}

export async function list(db: Queryable, userId: number): Promise<Device[]> {
  const r = await db.query<{ device_id: string; caption: string; type: DeviceType; last_seen: Date }>(
    'SELECT device_id, caption, type, last_seen FROM devices WHERE user_id = $1 ORDER BY device_id',
    [userId],
  );
  return r.rows.map((d) => ({ id: d.device_id, caption: d.caption, type: d.type, lastSeen: d.last_seen }));
}
