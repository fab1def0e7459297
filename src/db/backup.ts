import fs from 'node:fs';
import readline from 'node:readline';
import { pipeline } from 'node:stream/promises';
import { PassThrough } from 'node:stream';
import zlib from 'node:zlib';
import pg from 'pg';
import { renameDurably } from '../files';

// A logical backup of castsync's tables, written with SQL alone (the embedded PostgreSQL ships no
// pg_dump, and a pg_dump older than the server refuses to dump it): one consistent snapshot, every table
// of the public schema as JSON lines, gzip-compressed, with the schema's migration named in the first
// line. A restore loads it into a database migrated to that same migration, then migrates the rest: a
// backup of an older release restores into a newer one (docs/backups.md).

export const BACKUP_FORMAT = 'castsync-backup';

export type BackupHeader = {
  format: typeof BACKUP_FORMAT;
  format_version: 1;
  /** The castsync version that wrote it. */
  version: string;
  /** The newest migration applied to the database it was taken from. */
  migration: string;
  created: string;
  /** The tables, in an order in which every foreign key points backwards. */
  tables: string[];
};

/** A row as the backup holds it: its table, and the row as JSON text (never parsed here: a bigint keeps every digit). */
type Line = { table: string; row: string };

/** The public schema's tables (the migrations' own bookkeeping left out), parents before children. */
async function tablesInOrder(db: pg.ClientBase): Promise<string[]> {
  const tables = (
    await db.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND c.relname <> 'pgmigrations' ORDER BY c.relname`,
    )
  ).rows.map((r) => r.name);
  const edges = (
    await db.query<{ child: string; parent: string }>(
      `SELECT c.conrelid::regclass::text AS child, c.confrelid::regclass::text AS parent FROM pg_constraint c
        JOIN pg_namespace n ON n.oid = c.connamespace WHERE c.contype = 'f' AND n.nspname = 'public'`,
    )
  ).rows;
  const ordered: string[] = [];
  const visit = (t: string, path: Set<string>) => {
    if (ordered.includes(t) || path.has(t)) return;
    path.add(t);
    for (const e of edges) if (e.child === t && e.parent !== t) visit(e.parent, path);
    ordered.push(t);
  };
  for (const t of tables) visit(t, new Set());
  return ordered;
}

async function newestMigration(db: pg.ClientBase): Promise<string> {
  const r = await db.query<{ name: string }>('SELECT name FROM pgmigrations ORDER BY run_on DESC, id DESC LIMIT 1');
  if (!r.rows[0]) throw new Error('The database has no castsync schema to back up');
  return r.rows[0].name;
}

/**
 * Opens `file` for writing, made or emptied, readable and writable by its owner only (0600): a backup holds
 * password hashes and the passwords of other servers that unfinished imports keep. The mode is set again
 * on the open file, since a file left by a backup that was cut off keeps its own mode when opened.
 */
async function createPrivate(file: string): Promise<fs.promises.FileHandle> {
  const handle = await fs.promises.open(file, 'w', 0o600);
  try {
    await handle.chmod(0o600);
  } catch (err) {
    await handle.close();
    throw err;
  }
  return handle;
}

/**
 * Writes the backup to `file` (through a temporary file, renamed when complete and on the disk, both its
 * owner's only); returns its header and row count.
 */
export async function writeBackup(databaseUrl: string, file: string, version: string) {
  const db = new pg.Client({ connectionString: databaseUrl, application_name: 'castsync-backup' });
  await db.connect();
  const tmp = `${file}.partial`;
  let rows = 0;
  try {
    // One snapshot for every table: what the backup holds is what the database held at one moment.
    await db.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const header: BackupHeader = {
      format: BACKUP_FORMAT,
      format_version: 1,
      version,
      migration: await newestMigration(db),
      created: new Date().toISOString(),
      tables: await tablesInOrder(db),
    };
    const lines = new PassThrough();
    const written = pipeline(lines, zlib.createGzip(), (await createPrivate(tmp)).createWriteStream());
    const put = async (text: string) => {
      if (!lines.write(`${text}\n`)) await new Promise((resolve) => lines.once('drain', resolve));
    };
    await put(JSON.stringify(header));
    for (const table of header.tables) {
      await db.query(`DECLARE rows_of CURSOR FOR SELECT row_to_json(t)::text AS j FROM "${table}" t`);
      for (;;) {
        const batch = await db.query<{ j: string }>('FETCH 1000 FROM rows_of');
        for (const r of batch.rows) await put(`{"table":${JSON.stringify(table)},"row":${r.j}}`);
        rows += batch.rows.length;
        if (batch.rows.length < 1000) break;
      }
      await db.query('CLOSE rows_of');
    }
    lines.end();
    await written;
    await db.query('COMMIT');
    await renameDurably(tmp, file);
    return { header, rows };
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  } finally {
    await db.end();
  }
}

/** How writeBackup writes a row's line: the table's name, then the row as PostgreSQL wrote it. */
const ROW_LINE = /^\{"table":("(?:[^"\\]|\\.)*"),"row":/;

/**
 * Reads the whole backup and checks every line (a restore calls it before it drops anything, so a file cut
 * short or damaged anywhere is refused with the database as it was); returns its header.
 */
export async function checkBackup(file: string): Promise<BackupHeader> {
  let header: BackupHeader | undefined;
  for await (const line of readBackup(file)) if ('format' in line) header = line;
  return header!;
}

/**
 * The lines of a backup file (gzip or plain), the header first; anything else is refused with a reason.
 * A reader that stops early closes the file: an error further on is then nobody's, not an unhandled
 * 'error' event that would end the process.
 */
export async function* readBackup(file: string): AsyncGenerator<BackupHeader | Line> {
  const head = Buffer.alloc(2);
  const fd = fs.openSync(file, 'r');
  fs.readSync(fd, head, 0, 2, 0);
  fs.closeSync(fd);
  const raw = fs.createReadStream(file);
  const gunzip = head[0] === 0x1f && head[1] === 0x8b ? zlib.createGunzip() : undefined;
  // pipe() does not pass a read error on: the gunzip stream fails with it, and readline passes that on.
  if (gunzip) raw.on('error', (err) => gunzip.destroy(err));
  const lines = readline.createInterface({ input: gunzip ? raw.pipe(gunzip) : raw, crlfDelay: Infinity });
  let header: BackupHeader | undefined;
  try {
    for await (const text of lines) {
      if (text === '') continue;
      if (!header) {
        header = parseHeader(text);
        if (!header) throw new Error(`${file} is not a castsync backup`);
        yield header;
        continue;
      }
      const m = ROW_LINE.exec(text);
      if (!m || !text.endsWith('}') || !isJson(text))
        throw new Error(`${file} is not a castsync backup (a line is not a row)`);
      const table = JSON.parse(m[1]!) as string;
      if (!header.tables.includes(table))
        throw new Error(`${file} is not a castsync backup (a row of a table it does not list)`);
      yield { table, row: text.slice(m[0].length, -1) };
    }
  } catch (err) {
    // zlib's errors (Z_BUF_ERROR at a cut, Z_DATA_ERROR for damage) name nothing an operator knows.
    if ((err as NodeJS.ErrnoException).code?.startsWith('Z_'))
      throw new Error(`${file} is not a castsync backup (it is cut short or damaged: ${(err as Error).message})`);
    throw err;
  } finally {
    lines.close();
    gunzip?.destroy();
    raw.destroy();
  }
  if (!header) throw new Error(`${file} is empty`);
}

function parseHeader(text: string): BackupHeader | undefined {
  let h: Partial<BackupHeader> | undefined;
  try {
    h = JSON.parse(text) as Partial<BackupHeader>;
  } catch {
    return undefined;
  }
  return h?.format === BACKUP_FORMAT && h.format_version === 1 && Array.isArray(h.tables)
    ? (h as BackupHeader)
    : undefined;
}

/** Whether a row line is whole JSON: a line damaged inside its row is refused before a restore drops anything. */
function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Loads a backup's rows into a database already migrated to the backup's migration, in one transaction:
 * each table in batches, identity columns kept (and their sequences moved past them).
 */
export async function loadBackup(databaseUrl: string, file: string): Promise<{ header: BackupHeader; rows: number }> {
  const db = new pg.Client({ connectionString: databaseUrl, application_name: 'castsync-restore' });
  await db.connect();
  let header: BackupHeader | undefined;
  let rows = 0;
  const pending = new Map<string, string[]>();
  const columns = new Map<string, string[]>();
  let current: string | undefined;
  const flush = async (table: string) => {
    const batch = pending.get(table) ?? [];
    if (batch.length === 0) return;
    let cols = columns.get(table);
    if (!cols) {
      const r = await db.query<{ column_name: string }>(
        `SELECT column_name FROM information_schema.columns
          WHERE table_schema = 'public' AND table_name = $1 AND is_generated = 'NEVER' ORDER BY ordinal_position`,
        [table],
      );
      if (r.rows.length === 0) throw new Error(`The backup has a table ${table} that this schema does not`);
      cols = r.rows.map((c) => `"${c.column_name}"`);
      columns.set(table, cols);
    }
    const list = cols.join(', ');
    await db.query(
      `INSERT INTO "${table}" (${list}) OVERRIDING SYSTEM VALUE
       SELECT ${list} FROM json_populate_recordset(null::"${table}", $1::json)`,
      [`[${batch.join(',')}]`],
    );
    rows += batch.length;
    pending.set(table, []);
  };
  try {
    await db.query('BEGIN');
    for await (const line of readBackup(file)) {
      if ('format' in line) {
        header = line;
        continue;
      }
      // The backup holds each table whole, parents first: a table's last rows go in before the next's.
      if (current !== undefined && current !== line.table) await flush(current);
      current = line.table;
      const batch = pending.get(line.table) ?? [];
      batch.push(line.row);
      pending.set(line.table, batch);
      if (batch.length >= 500) await flush(line.table);
    }
    if (current !== undefined) await flush(current);
    // Identity columns were loaded as they were: their sequences go on after the largest value.
    const identities = await db.query<{ table_name: string; column_name: string }>(
      `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public' AND is_identity = 'YES'`,
    );
    for (const c of identities.rows) {
      await db.query(
        `SELECT setval(pg_get_serial_sequence($1, $2), coalesce((SELECT max("${c.column_name}") FROM "${c.table_name}"), 0) + 1, false)`,
        [c.table_name, c.column_name],
      );
    }
    await db.query('COMMIT');
    return { header: header!, rows };
  } catch (err) {
    await db.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    await db.end();
  }
}
