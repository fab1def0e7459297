import type { Config } from '../config';
import type { Logger } from '../logger';
import { openEmbedded } from './embedded';

export type DatabaseHandle = { url: string; embedded: boolean; stop: () => Promise<void> };

/** DATABASE_URL when it is set; otherwise the embedded PostgreSQL in DATA_DIR. */
export async function openDatabase(
  config: Config,
  logger: Logger,
  { attach }: { attach: boolean },
): Promise<DatabaseHandle> {
  if (config.databaseUrl) return { url: config.databaseUrl, embedded: false, stop: async () => {} };
  const db = await openEmbedded({ dataDir: config.dataDir, logger, attach });
  return { url: db.url, embedded: true, stop: db.stop };
}
