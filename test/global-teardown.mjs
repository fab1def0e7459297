import { rmSync } from 'node:fs';

export default async function globalTeardown() {
  await globalThis.__castsyncTestDb?.stop();
  if (process.env.CASTSYNC_TEST_DATA_DIR) rmSync(process.env.CASTSYNC_TEST_DATA_DIR, { recursive: true, force: true });
}
