import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * A temporary directory for the test file that calls this at its top level, removed with all it holds after
 * the file's tests (each test makes what it needs inside it).
 */
export function tempDirForFile(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
