// One embedded PostgreSQL for the whole run (fsync off: test data need not survive a power cut). The
// schema is migrated once into a template database; each test file clones it (test/helpers/db.ts).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import embedded from '../dist/db/embedded.js';
import migrations from '../dist/jobs/migrate.js';
import logging from '../dist/logger.js';

export default async function globalSetup() {
  const dataDir = mkdtempSync(join(tmpdir(), 'castsync-test-'));
  const logger = logging.createLogger('warn');
  const db = await embedded.openEmbedded({
    dataDir,
    logger,
    attach: false,
    settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', max_connections: '300' },
  });
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  await admin.query('DROP DATABASE IF EXISTS castsync_template');
  await admin.query('CREATE DATABASE castsync_template');
  await admin.end();
  const templateUrl = db.url.replace(/\/postgres$/, '/castsync_template');
  await migrations.migrateDatabase(templateUrl, logger);
  process.env.CASTSYNC_TEST_DATABASE_URL = db.url;
  process.env.CASTSYNC_TEST_DATA_DIR = dataDir;
  globalThis.__castsyncTestDb = db;
}
