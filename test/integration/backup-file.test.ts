import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import path from 'node:path';
import { backup } from '../../src/cli/backup-restore';
import { readBackup } from '../../src/db/backup';
import { testApp, type TestApp } from '../helpers/app';
import { tempDirForFile } from '../helpers/tmp';

// The backup file holds password hashes and the passwords of other servers that unfinished imports keep
// (docs/backups.md): it is its owner's only, and so is its partial file while it is written. Reading one
// back: a file cut short is refused with a reason, never an error the process cannot catch.

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());
const tmp = tempDirForFile('castsync-backup-');

/** Until the backup's own connection waits for a lock: its partial file is then open and part written. */
async function backupWaiting(): Promise<void> {
  for (;;) {
    const r = await t.db.query(
      `SELECT 1 FROM pg_stat_activity WHERE application_name = 'castsync-backup' AND wait_event_type = 'Lock'`,
    );
    if (r.rowCount === 1) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const modeOf = (file: string) => statSync(file).mode & 0o777;

test('the partial file while it is written, and the backup, are 0600, even over a partial file a backup cut off left', async () => {
  await t.user('backedup');
  const file = path.join(mkdtempSync(path.join(tmp, 'mode-')), 'castsync.backup');
  const partial = `${file}.partial`;
  writeFileSync(partial, 'what a backup that was cut off wrote');
  chmodSync(partial, 0o644);
  // A table the backup reads is locked: the backup stops there, its partial file open.
  const holder = await t.db.connect();
  try {
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
    const written = backup(t.url, file);
    await backupWaiting();
    expect(modeOf(partial)).toBe(0o600);
    await holder.query('ROLLBACK');
    expect((await written).rows).toBeGreaterThan(0);
  } finally {
    await holder.query('ROLLBACK');
    holder.release();
  }
  expect(modeOf(file)).toBe(0o600);
  expect(existsSync(partial)).toBe(false);
});

test('a reader that stops at the header of a backup cut short closes it: the cut is no error of the process', async () => {
  const file = path.join(mkdtempSync(path.join(tmp, 'cut-')), 'castsync.backup');
  await backup(t.url, file);
  const bytes = readFileSync(file);
  writeFileSync(file, bytes.subarray(0, bytes.length - 20));
  for await (const line of readBackup(file)) {
    expect(line).toHaveProperty('format', 'castsync-backup');
    break;
  }
  // Long enough for a stream left running to read on to the cut, whose error would fail this test.
  await new Promise((resolve) => setTimeout(resolve, 200));
});
