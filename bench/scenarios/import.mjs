// Moving a history in: a user of another gpodder server (here the running castsync itself, over HTTP) with
// 500 feeds on two devices and 20,000 episode actions, imported by the CLI into a new local user; then the
// same import again (nothing new), an export of the imported user, and its restore into a third user. Wall
// time and peak resident memory of the CLI process for each; no floor (the floor has no import).
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { json, log, PASSWORD, root, sleep } from '../lib.mjs';

const FEEDS = 500;
const ACTIONS = 20_000;

/** Peak resident memory so far of a process, in MiB (VmHWM), or undefined once it is gone. */
function peakMib(pid) {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? undefined : Number(kb) / 1024;
  } catch {
    return undefined;
  }
}

/** Runs the CLI, its password on stdin: wall seconds, peak RSS (polled every 10 ms), output. */
function cli(ctx, args) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['dist/cli/index.js', ...args], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: ctx.db.url, LOG_LEVEL: 'warn' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let peak = 0;
    const timer = setInterval(() => (peak = Math.max(peak, peakMib(child.pid) ?? 0)), 10);
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.stdin.end(`${PASSWORD}\n`);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearInterval(timer);
      if (code !== 0) return reject(new Error(`cli ${args.join(' ')} exited ${code}:\n${out}`));
      resolve({ seconds: (performance.now() - started) / 1000, peak_rss_mib: peak, out });
    });
  });
}

export default async function importHistory(ctx, results) {
  const { pool, origin } = ctx;
  log(`measuring an import of ${ACTIONS} actions and ${FEEDS} feeds ...`);
  for (const name of ['moving-from', 'moving-to', 'moving-restored']) {
    await pool.query('INSERT INTO users (username, password_hash) VALUES ($1, $2)', [name, ctx.hash]);
  }
  const from = await ctx.login('moving-from');
  const feed = (k) => `https://moving.bench.example/${k}/feed.xml`;
  for (const [device, part] of [
    ['phone', 0],
    ['laptop', 1],
  ]) {
    const add = Array.from({ length: FEEDS / 2 }, (_, k) => feed(2 * k + part));
    const r = await json(
      origin,
      'POST',
      `/api/2/subscriptions/moving-from/${device}.json`,
      { authorization: from.basic },
      { add, remove: [] },
    );
    if (r.status !== 200) throw new Error(`import seed subscriptions ${r.status}`);
  }
  for (let start = 0; start < ACTIONS; start += 5000) {
    const actions = Array.from({ length: 5000 }, (_, i) => {
      const k = start + i;
      return {
        podcast: feed(k % FEEDS),
        episode: `https://moving.bench.example/${k % FEEDS}/${Math.floor(k / FEEDS)}.mp3`,
        guid: `moving-${k}`,
        action: k % 4 === 0 ? 'download' : 'play',
        timestamp: new Date(Date.UTC(2020, 0, 1) + k * 60_000).toISOString().slice(0, 19),
        ...(k % 4 !== 0 && { started: 0, position: 60 + (k % 3000), total: 3600 }),
        device: k % 2 ? 'phone' : 'laptop',
      };
    });
    const r = await json(origin, 'POST', '/api/2/episodes/moving-from.json', { authorization: from.basic }, actions);
    if (r.status !== 200) throw new Error(`import seed actions ${r.status}`);
  }
  await pool.query('VACUUM ANALYZE');
  await sleep(100);

  const args = ['import', 'gpodder', origin, 'moving-to', '--remote-user', 'moving-from', '--password-stdin'];
  const first = await cli(ctx, args);
  const stored = await pool.query(
    `SELECT (SELECT count(*) FROM episode_actions a JOIN users u ON u.id = a.user_id WHERE u.username = 'moving-to') AS actions,
            (SELECT count(*) FROM subscriptions s JOIN users u ON u.id = s.user_id WHERE u.username = 'moving-to') AS feeds`,
  );
  const { actions, feeds } = stored.rows[0];
  if (Number(actions) !== ACTIONS || Number(feeds) !== FEEDS)
    throw new Error(`the import stored ${actions} actions, ${feeds} feeds:\n${first.out}`);
  const again = await cli(ctx, args);
  if (!again.out.includes(`actions: 0 new of ${ACTIONS.toLocaleString('en')}`))
    throw new Error(`second import:\n${again.out}`);
  const file = join(os.tmpdir(), `castsync-bench-archive-${process.pid}.json`);
  try {
    const exported = await cli(ctx, ['export', 'moving-to', '--output', file]);
    const restored = await cli(ctx, ['import', 'archive', file, 'moving-restored']);
    const shown = (r) => ({ seconds: r.seconds, peak_rss_mib: r.peak_rss_mib });
    results[`import, ${ACTIONS} actions and ${FEEDS} feeds (CLI)`] = {
      first: shown(first),
      again_nothing_new: shown(again),
      export: shown(exported),
      restore_archive: shown(restored),
    };
  } finally {
    rmSync(file, { force: true });
  }
}
