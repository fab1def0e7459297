import type { Router } from 'express';
import type { ApiContext } from '../../api-context';
import * as devices from '../../devices/service';
import { currentUser } from '../../http/credentials';
import { route } from '../../http/method';
import { when } from '../format';
import { render } from '../views';

/** The Devices page: each device and app with what its recent uploads sent and what was skipped. */
export function deviceRoutes(r: Router, ctx: ApiContext): void {
  route(r, '/web/devices', {
    get: async (req, res) => {
      const userId = currentUser(req);
      const [known, recent] = await Promise.all([devices.list(ctx.db, userId), devices.recentReports(ctx.db, userId)]);
      render(res, 'devices', { title: 'Devices', sources: sourcesOf(known, recent), when, sentText });
    },
  });
}

/** A device (or an app that names none) with its recent uploads, newest first, as the Devices page shows it. */
type Source = {
  key: string;
  name: string;
  device: devices.Device | undefined;
  client: string;
  reports: devices.SyncReport[];
  problems: number;
};

/** Every device, then the apps that name no device by their User-Agent; their reports with them. */
function sourcesOf(known: devices.Device[], recent: devices.SyncReport[]): Source[] {
  const sources = new Map<string, Source>();
  known.forEach((d, i) => {
    sources.set(`d:${d.id}`, {
      key: `device-${i}`,
      name: d.caption || d.id,
      device: d,
      client: '',
      reports: [],
      problems: 0,
    });
  });
  for (const r of recent) {
    const k = r.device !== undefined ? `d:${r.device}` : `c:${r.client}`;
    let s = sources.get(k);
    if (!s) {
      const name = r.device ?? (r.client ? `Nextcloud-mode app: ${r.client}` : 'Nextcloud-mode app');
      s = { key: `source-${sources.size}`, name, device: undefined, client: '', reports: [], problems: 0 };
      sources.set(k, s);
    }
    s.client ||= r.client;
    s.reports.push(r);
    s.problems += r.skipped.length;
  }
  return [...sources.values()];
}

/** What an upload sent, in words. */
function sentText(r: devices.SyncReport): string {
  const n = (k: string) => r.sent[k] ?? 0;
  return r.kind === 'subscriptions'
    ? `uploaded subscriptions: ${n('add')} added, ${n('remove')} removed`
    : `uploaded ${n('actions')} episode action${n('actions') === 1 ? '' : 's'}`;
}
