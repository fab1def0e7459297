// The devices service, one seam for every door and the rooms above: what they may call, by name.
// A user's gpodder devices (registry.ts) and the reports of what an app's sync skipped (reports.ts). The
// files behind it import each other, never this one.
export { DEVICE_ID, DEVICE_TYPES, checkDeviceId, list, seen, upsert } from './registry';
export type { Device, DeviceType } from './registry';
export { note as noteReport, recent as recentReports } from './reports';
export type { ReportKind, SkippedItem, SyncReport } from './reports';
