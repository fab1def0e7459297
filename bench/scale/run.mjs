// castsync at gpodder.net's size (bench/README.md, "Scale"): a data set of SCALE × gpodder.net's (150,000
// accounts, 73 million episode actions) written with SQL, beside a baseline of the measured users alone
// (20,000 actions); every hot request measured on both in turn, with the ratio; database bytes per action and
// per subscription; the plans PostgreSQL runs; the fetcher's cycle over every feed.
//   npm run bench:scale                          (SCALE=0.01; builds first)
//   SCALE=0.1 SCALE_DATA_DIR=/var/tmp/scale npm run bench:scale    (keeps the generated data for the next run)
// Env: SCALE (0.01), SCALE_DATA_DIR (unset: temporary), CONN (16), SECONDS (6), ROUNDS (3), FETCH_FEEDS (20000),
// SCALE_RESULTS (bench/scale/results/scale-<SCALE>.json). Prints the figures, the plans, and writes them as JSON.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { CONN, log, round, ROUNDS, SECONDS } from '../lib.mjs';
import { fetchCycle, fetcherPlans } from './fetcher.mjs';
import {
  checkAgainstApp,
  compare,
  exportOf,
  fullDownloadOf,
  READS,
  sequential,
  usersOf,
  warmUp,
  WRITES,
} from './measure.mjs';
import { capturePlans } from './plans.mjs';
import { peakRssMib } from './proc.mjs';
import { openWorld } from './world.mjs';

const SCALE = Number(process.env.SCALE ?? 0.01);
/** What to do (SCALE_PARTS, comma-separated): all of it by default. */
const PARTS = (process.env.SCALE_PARTS ?? 'requests,plans,fetcher').split(',');
const out = process.env.SCALE_RESULTS ?? join(import.meta.dirname, 'results', `scale-${SCALE}.json`);

const t0 = Date.now();
const git = (...args) =>
  execFileSync('git', args, { cwd: import.meta.dirname })
    .toString()
    .trim();
const results = {
  scale: SCALE,
  commit:
    git('rev-parse', '--short', 'HEAD') + (git('status', '--porcelain', '--', 'src', 'migrations') ? ' (changed)' : ''),
  machine: {
    cpus: os.cpus().length,
    cpu: os.cpus()[0]?.model,
    memory_gib: os.totalmem() / 2 ** 30,
    node: process.version,
  },
  settings: { conn: CONN, seconds: SECONDS, rounds: ROUNDS },
};
const worlds = [];
// Stopped (Ctrl-C, kill): the servers and clusters stop with it.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => void Promise.all(worlds.map((w) => w.close())).finally(() => process.exit(1)));
}
try {
  worlds.push(await openWorld('baseline', 0, log));
  worlds.push(await openWorld(`scale-${SCALE}`, SCALE, log));
  const [base, scaled] = worlds;
  results.generated = { baseline: base.meta.generated, scale: scaled.meta.generated };
  for (const w of worlds) {
    w.users = await usersOf(w);
    const checked = await checkAgainstApp(w);
    log(`${w.name}: ${checked.records} records and ${checked.actions} actions read back as the app writes them`);
  }
  // As generated, before any run's writes (a kept data set's indexes keep the space those took).
  results.sizes = { baseline: base.meta.sizes, scale: scaled.meta.sizes };
  if (PARTS.includes('requests')) await requests(base, scaled);
  if (PARTS.includes('plans')) {
    log('the plans of the hot requests ...');
    const planned = Object.fromEntries(
      Object.entries({ ...READS, ...WRITES }).map(([k, makeOf]) => [k, makeOf(scaled.users, scaled)]),
    );
    planned.export_history = exportOf(scaled.users.history);
    results.plans = { ...(await capturePlans(scaled, planned)), ...(await fetcherPlans(scaled, log)) };
  }
  if (PARTS.includes('fetcher')) {
    log("the fetcher's cycle ...");
    results.fetcher = { baseline: await fetchCycle(base, log), scale: await fetchCycle(scaled, log) };
  }
  results.wall_seconds = (Date.now() - t0) / 1000;
  report();
} catch (err) {
  log(err);
  process.exitCode = 1;
} finally {
  for (const w of worlds) await w.close();
}
process.exit();

/** Every request on both data sets in turn; whole archives and big downloads one after the other; peak memory. */
async function requests(base, scaled) {
  log('measuring: the reads, then the writes, baseline and scale in turn ...');
  await warmUp(worlds);
  results.reads = await compare(log, worlds, READS);
  results.writes = await compare(log, worlds, WRITES);
  log('measuring: whole archives, one after the other ...');
  results.export_history = {
    baseline: await sequential(base, exportOf(base.users.history), 3),
    scale: await sequential(scaled, exportOf(scaled.users.history), 3),
  };
  const big = scaled.users.big;
  if (big) {
    log(`measuring: ${big.name}'s full download and archive ...`);
    results.big_user = {
      name: big.name,
      actions: Number(
        (await scaled.pool.query('SELECT count(*) FROM episode_actions WHERE user_id = $1', [big.id])).rows[0].count,
      ),
      since_0: await sequential(scaled, fullDownloadOf(big), 3),
      export: await sequential(scaled, exportOf(big), 2),
    };
  }
  results.peak_node_rss_mib = { baseline: peakRssMib(base.serverPid()), scale: peakRssMib(scaled.serverPid()) };
}

/** The figures, the sequential scans of big tables in the plans; and all of it as JSON, in `out`. */
function report() {
  console.log(
    `SCALE=${SCALE}: ${JSON.stringify(results.sizes.scale.actions)} actions against the baseline's ${results.sizes.baseline.actions}`,
  );
  for (const group of ['reads', 'writes']) {
    for (const [k, v] of Object.entries(results[group] ?? {})) {
      console.log(
        k.padEnd(20),
        JSON.stringify(
          {
            p50_ms: [v.baseline.p50_ms, v.scale.p50_ms],
            p99_ms: [v.baseline.p99_ms, v.scale.p99_ms],
            rps: [v.baseline.rps, v.scale.rps],
            p99_ratio: v.p99_ratio,
          },
          round,
        ),
      );
    }
  }
  for (const k of ['export_history', 'big_user', 'peak_node_rss_mib', 'fetcher', 'generated']) {
    if (results[k]) console.log(k.padEnd(20), JSON.stringify(results[k], round));
  }
  for (const w of ['baseline', 'scale']) {
    const s = results.sizes[w];
    console.log(`sizes.${w}`.padEnd(20), JSON.stringify({ ...s, tables: undefined }, round));
  }
  for (const [label, p] of Object.entries(results.plans ?? {})) {
    for (const s of p.seqScans)
      console.log(`SEQ SCAN of ${s.table} in ${label}: ${s.query.replace(/\s+/g, ' ').slice(0, 160)}`);
  }
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify(results, round, 2) + '\n');
  log(`written to ${out}; ${results.wall_seconds.toFixed(0)} s in all`);
}
