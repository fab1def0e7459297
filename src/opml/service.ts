// The OPML service, one seam for every door and the rooms above: what they may call, by name.
// A user's subscriptions out as OPML and an OPML file's feeds in (import-export.ts), and the format itself
// (opml.ts). The files behind it import each other, never this one.
export { OPML_CHUNK, exportOpml, importOpml, opmlOf } from './import-export';
export { buildOpml, escapeXml, parseOpml } from './opml';
export type { OpmlFeed } from './opml';
