// One data set of the scale bench and the castsync that serves it: its own embedded PostgreSQL (kept in
// SCALE_DATA_DIR/<name> between runs when that is set, else in a temporary directory), the data generated
// once, and castsync started as `npm start` on it.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { PASSWORD, require, resetAgent, serverPid, startProcess, stop } from '../lib.mjs';
import { startCluster } from './cluster.mjs';
import { generate } from './generate.mjs';
import { feedCount, HISTORY, popularCount, PROBES } from './shape.mjs';

const { freePort } = require('./dist/db/embedded.js');
const { createLogger } = require('./dist/logger.js');
const { hashPassword } = require('./dist/auth/secrets.js');
const { migrateDatabase } = require('./dist/jobs/migrate.js');

/** Bumped when the generator changes what it writes: a kept data set of another version is made again. */
const DATA_VERSION = 3;

/**
 * Takes a kept data set back to what was generated: the bench's own writes of an earlier run removed (the
 * measured users' uploads and pushes, the twins of the check, sessions) and the fetcher's items of the
 * feeds that had none.
 */
async function undoBenchWrites(pool, meta) {
  const probes = `(SELECT id FROM users WHERE username LIKE 'probe%')`;
  await pool.query(`DELETE FROM subscriptions WHERE user_id IN (SELECT id FROM users WHERE username LIKE 'twin-%')`);
  await pool.query(`DELETE FROM users WHERE username LIKE 'twin-%'`);
  await pool.query(`DELETE FROM episode_actions WHERE user_id IN ${probes} AND changed > $1`, [meta.generatedAt]);
  await pool.query(`DELETE FROM episode_latest WHERE user_id IN ${probes}`);
  await pool.query(`INSERT INTO episode_latest (user_id, episode_hash, action, action_id, at, changed)
    SELECT DISTINCT ON (user_id, episode_hash, action) user_id, episode_hash, action, id, at, changed
      FROM episode_actions WHERE user_id IN ${probes} ORDER BY user_id, episode_hash, action, at DESC, id DESC`);
  await pool.query(`DELETE FROM subscriptions WHERE user_id IN ${probes} AND feed_url ~ '/1\\d{6}\\.xml$'`);
  await pool.query(`UPDATE users u SET record_count = (SELECT count(*) FROM subscriptions s WHERE s.user_id = u.id)
                     WHERE id IN ${probes}`);
  await pool.query(`DELETE FROM tokens WHERE kind <> 'personal' AND created_at > $1`, [meta.generatedAt]);
  await pool.query(
    `DELETE FROM feed_items i USING feeds f WHERE f.url_hash = i.feed_hash
                       AND substring(f.feed_url FROM '/(\\d+)\\.xml$')::int > $1`,
    [meta.popular],
  );
  await pool.query(
    `UPDATE feeds SET next_fetch_at = now() + interval '1 day' WHERE next_fetch_at < now() + interval '1 hour'`,
  );
  await pool.query('VACUUM ANALYZE');
}

/** Table and index bytes, in all and per action and per subscription record. */
export async function sizesOf(pool, pgDir) {
  const { rows } = await pool.query(
    `SELECT c.relname AS table, c.reltuples::bigint AS rows, pg_table_size(c.oid) AS table_bytes,
            pg_indexes_size(c.oid) AS index_bytes
       FROM pg_class c WHERE c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace
      ORDER BY pg_total_relation_size(c.oid) DESC`,
  );
  const of = (t) => rows.find((r) => r.table === t) ?? { rows: 0, table_bytes: 0, index_bytes: 0 };
  const per = (tables, n) => ({
    table: tables.reduce((s, t) => s + Number(of(t).table_bytes), 0) / n,
    index: tables.reduce((s, t) => s + Number(of(t).index_bytes), 0) / n,
  });
  const actions = Number(of('episode_actions').rows);
  const records = Number(of('subscriptions').rows);
  const { rows: db } = await pool.query('SELECT pg_database_size(current_database()) AS bytes');
  return {
    database_bytes: Number(db[0].bytes),
    data_dir_bytes: Number(execFileSync('du', ['-sb', pgDir]).toString().split('\t')[0]),
    actions,
    records,
    bytes_per_action: per(['episode_actions', 'episode_latest'], actions),
    bytes_per_subscription: per(['subscriptions', 'subscription_guids', 'subscription_urls', 'feed_changes'], records),
    tables: rows
      .filter((r) => Number(r.table_bytes) + Number(r.index_bytes) > 1 << 20)
      .map((r) => ({
        ...r,
        rows: Number(r.rows),
        table_bytes: Number(r.table_bytes),
        index_bytes: Number(r.index_bytes),
      })),
  };
}

const LOAD_WAL = /^\d+[MG]B$/.test(process.env.SCALE_LOAD_WAL ?? '') ? process.env.SCALE_LOAD_WAL : '16GB';

export async function openWorld(name, scale, log) {
  const keep = process.env.SCALE_DATA_DIR;
  const dir = keep ? join(keep, name) : mkdtempSync(join(tmpdir(), `castsync-scale-${name}-`));
  mkdirSync(dir, { recursive: true });
  const metaFile = join(dir, 'meta.json');
  let meta = existsSync(metaFile) ? JSON.parse(readFileSync(metaFile, 'utf8')) : undefined;
  if (meta && (meta.scale !== scale || meta.version !== DATA_VERSION)) {
    log(`${dir} holds another data set (SCALE=${meta.scale}, version ${meta.version}): making it again`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    meta = undefined;
  }
  const logger = createLogger('warn');
  const db = await startCluster(dir);
  const pool = new pg.Pool({ connectionString: db.url, max: 4, application_name: 'scale-bench' });
  // pool.end() resolves before its connections have closed; stopping PostgreSQL right after ends them, and
  // an error on a pool with no listener would throw out of the bench.
  pool.on('error', () => undefined);
  if (!meta) {
    log(`generating the ${name} data set (SCALE=${scale}) ...`);
    await migrateDatabase(db.url, logger);
    // A bulk load: checkpoints further apart while it runs (put back afterwards); SCALE_LOAD_WAL lowers the
    // write-ahead log's allowance where the disk is short (SCALE=1 on a disk with less than 100 GB free).
    await pool.query(`ALTER SYSTEM SET max_wal_size = '${LOAD_WAL}'`);
    await pool.query(`ALTER SYSTEM SET checkpoint_timeout = '30min'`);
    await pool.query('SELECT pg_reload_conf()');
    const port = await freePort();
    const generated = await generate(db.url, { scale, port, passwordHash: await hashPassword(PASSWORD), log });
    await pool.query('ALTER SYSTEM RESET max_wal_size');
    await pool.query('ALTER SYSTEM RESET checkpoint_timeout');
    await pool.query('SELECT pg_reload_conf()');
    await pool.query('CHECKPOINT');
    meta = {
      version: DATA_VERSION,
      scale,
      port,
      generated,
      generatedAt: new Date().toISOString(),
      popular: popularCount(feedCount(scale)),
      sizes: await sizesOf(pool, join(dir, 'pg')),
    };
    writeFileSync(metaFile, JSON.stringify(meta, null, 2));
  } else {
    log(`using the ${name} data set kept in ${dir}, as it was generated`);
    await undoBenchWrites(pool, meta);
  }
  const httpPort = await freePort();
  const origin = `http://127.0.0.1:${httpPort}`;
  const world = {
    name,
    scale,
    dir,
    pgDir: join(dir, 'pg'),
    db,
    pool,
    origin,
    meta,
    /** The feed hosts' port the data set's feed URLs name. */
    feedPort: meta.port,
    castsync: undefined,
    /**
     * castsync as `npm start` runs it. Credentials are remembered for a day instead of a minute, so that an
     * argon2 verification (50 ms) in some windows and not in others does not blur the comparison.
     */
    async start(extraEnv = { FEED_FETCH: 'false' }) {
      world.castsync = await startProcess(
        'npm',
        ['start', '--silent'],
        {
          DATABASE_URL: db.url,
          HOST: '127.0.0.1',
          PORT: String(httpPort),
          LOG_LEVEL: 'warn',
          AUTH_CACHE_TTL: '86400',
          ...extraEnv,
        },
        async () => (await fetch(`${origin}/healthz`).catch(() => ({ status: 0 }))).status === 200,
      );
    },
    async restart(extraEnv) {
      await stop(world.castsync);
      resetAgent();
      await world.start(extraEnv);
    },
    serverPid: () => serverPid(world.castsync.pid, 'dist/server.js'),
    async close() {
      await stop(world.castsync);
      await pool.end();
      await db.stop();
      if (!keep) rmSync(dir, { recursive: true, force: true });
    },
  };
  await world.start();
  return world;
}

/** The measured users' names: PROBES of the same shape, and the one with a long history. */
export const probeNames = Array.from({ length: PROBES }, (_, k) => `probe${k}`);
export const HISTORY_USER = 'history';
export { HISTORY };
