import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';

// Templates and static files live in src/web (the build compiles TypeScript only): found from dist/web
// and from src/web alike.
export const WEB_DIR = path.resolve(__dirname, '..', '..', 'src', 'web');
export const STATIC_DIR = path.join(WEB_DIR, 'static');

// The static files' versioned addresses: `/static/style.css?v=<digest of its bytes>`. A page names its
// files by these addresses, so a browser may keep each one for a year without asking again (it is
// immutable: another release's file is another address); the plain address is kept for an hour.

/** A year, for a file at its versioned address. */
export const IMMUTABLE = 'public, max-age=31536000, immutable';

const known = new Map<string, { mtimeMs: number; version: string }>();

/** The version of a file of STATIC_DIR (its name), read again when the file changes (`npm run dev`). */
export function versionOf(name: string): string | undefined {
  const file = path.join(STATIC_DIR, path.basename(name));
  let mtimeMs: number;
  try {
    mtimeMs = statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
  const kept = known.get(file);
  if (kept?.mtimeMs === mtimeMs) return kept.version;
  const version = createHash('sha256').update(readFileSync(file)).digest('base64url').slice(0, 12);
  known.set(file, { mtimeMs, version });
  return version;
}

/** The versioned address of a static file (`/static/app.js`), or the address as it is for anything else. */
export function asset(href: string): string {
  const version = href.startsWith('/static/') ? versionOf(href.slice('/static/'.length)) : undefined;
  return version ? `${href}?v=${version}` : href;
}
