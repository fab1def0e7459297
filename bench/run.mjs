// castsync's benchmark: castsync against the floor (bench/floor.mjs) in one run, on one PostgreSQL, with one
// load generator, then each door and feature in a scenario of its own (bench/scenarios/). See bench/README.md.
//   npm run bench                                 (builds first)
//   SCENARIOS=floor,gpodder npm run bench         (only these, in this run's order)
// Env: USERS (20), SUBS per user (1000), CONN (16), SECONDS per round (6), ROUNDS (3), SCALE_USERS (2000; 0
// skips the scale phase), BIG_SUBS, DATABASE_URL (else an embedded PostgreSQL). Prints a table, then one
// JSON line.
import { createContext, seedUsers } from './context.mjs';
import { CONN, freshPageMicros, loopbackCopyMicros, log, ROUNDS, round, SECONDS, SUBS, USERS } from './lib.mjs';
import basicBearer from './scenarios/basic-bearer.mjs';
import episodeActions from './scenarios/episode-actions.mjs';
import episodeDownload from './scenarios/episode-download.mjs';
import feedItems from './scenarios/feed-items.mjs';
import fetchBacklog from './scenarios/fetch-backlog.mjs';
import floor from './scenarios/floor.mjs';
import gpodder from './scenarios/gpodder.mjs';
import importHistory from './scenarios/import.mjs';
import opaSync from './scenarios/opa-sync.mjs';
import queue from './scenarios/queue.mjs';
import scale from './scenarios/scale.mjs';
import stats from './scenarios/stats.mjs';
import userSize from './scenarios/user-size.mjs';

/** In this order: basic-bearer measures right after floor's POSTs, and scale last, on the largest table. */
const SCENARIOS = {
  floor,
  'basic-bearer': basicBearer,
  'user-size': userSize,
  gpodder,
  'episode-actions': episodeActions,
  'episode-download': episodeDownload,
  'feed-items': feedItems,
  'fetch-backlog': fetchBacklog,
  import: importHistory,
  'opa-sync': opaSync,
  stats,
  queue,
  scale,
};
const chosen = process.env.SCENARIOS?.split(',').map((s) => s.trim()) ?? Object.keys(SCENARIOS);
for (const name of chosen) if (!SCENARIOS[name]) throw new Error(`no scenario ${name}: ${Object.keys(SCENARIOS)}`);

// First, before PostgreSQL and castsync run: what a fresh page of memory and a loopback copy cost this
// machine today, so that figures from two machines can be told apart.
const results = { fresh_page_us: freshPageMicros(), loopback_copy_us_per_100kib: await loopbackCopyMicros() };
const ctx = await createContext();
/** Prints what was measured: all of it, or, after a failure, the scenarios done before it. */
function report() {
  console.log(
    `users=${USERS} subs/user=${SUBS} conn=${CONN} ${SECONDS}s x ${ROUNDS} rounds (castsync vs floor, alternating)`,
  );
  for (const [k, v] of Object.entries(results)) {
    if (k === 'plans') continue;
    console.log(k.padEnd(34), JSON.stringify(v, round));
  }
  // A hundred guids or hashes in a plan are shown by their number.
  const shorten = (plan) =>
    plan.replace(/'\{([^}']{200,})\}'/g, (_, list) => `'{...${list.split(',').length} values...}'`);
  if (results.plans) {
    for (const [k, v] of Object.entries(results.plans)) console.log(`\n-- plan: ${k}\n${shorten(v)}`);
  }
  const summary = { ...results };
  delete summary.plans;
  console.log(JSON.stringify({ bench: summary }, round));
}
try {
  await ctx.start();
  await seedUsers(ctx);
  for (const [name, scenario] of Object.entries(SCENARIOS)) {
    if (chosen.includes(name)) await scenario(ctx, results);
  }
  results.castsync_rss_mib_end = await ctx.rss();
  report();
} catch (err) {
  log(err);
  log(`castsync's last output:\n${ctx.castsync?.output?.() ?? '(not started)'}`);
  report();
  process.exitCode = 1;
} finally {
  await ctx.close();
}
process.exit();
