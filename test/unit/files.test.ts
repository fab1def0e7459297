import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { renameDurably, writeFileDurably } from '../../src/files';

// Files that must last (a backup, a generated secret) are flushed before they are named, and their folder
// after: which handles are flushed, in which order, is what can be seen of it without cutting the power.

let dir: string;
let synced: string[];
let spy: jest.SpyInstance;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'castsync-files-'));
  synced = [];
  const probe = await fs.open(dir, 'r');
  const proto = Object.getPrototypeOf(probe) as { sync: () => Promise<void> };
  await probe.close();
  const sync = proto.sync;
  spy = jest.spyOn(proto, 'sync').mockImplementation(async function (this: { fd: number }) {
    synced.push(await fs.readlink(`/proc/self/fd/${this.fd}`));
    return sync.call(this);
  });
});
afterEach(async () => {
  spy.mockRestore();
  await fs.rm(dir, { recursive: true, force: true });
});

test('a finished file is flushed, renamed over the old one, then its folder is flushed', async () => {
  const file = path.join(dir, 'castsync.backup');
  await fs.writeFile(file, 'old');
  await fs.writeFile(`${file}.partial`, 'new');
  await renameDurably(`${file}.partial`, file);
  expect(await fs.readFile(file, 'utf8')).toBe('new');
  expect(await fs.readdir(dir)).toEqual(['castsync.backup']);
  expect(synced).toEqual([`${file}.partial`, dir]);
});

test('writeFileDurably flushes the same way, and a failure leaves the file as it was', async () => {
  const file = path.join(dir, 'secret');
  await writeFileDurably(file, 'one');
  expect(await fs.readFile(file, 'utf8')).toBe('one');
  expect(synced).toHaveLength(2);
  expect(synced[1]).toBe(dir);
  await expect(renameDurably(path.join(dir, 'missing.partial'), file)).rejects.toThrow(/ENOENT/);
  expect(await fs.readFile(file, 'utf8')).toBe('one');
  expect(await fs.readdir(dir)).toEqual(['secret']);
});
