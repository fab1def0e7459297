// The plans PostgreSQL really runs for each hot request, read with auto_explain (ANALYZE, BUFFERS) from the
// cluster's log while castsync serves the request, prepared statements and all; and the sequential scans
// among them of tables that hold many rows.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const AUTO_EXPLAIN = {
  session_preload_libraries: "'auto_explain'",
  'auto_explain.log_min_duration': '0',
  'auto_explain.log_analyze': 'on',
  'auto_explain.log_buffers': 'on',
  'auto_explain.log_timing': 'on',
  'auto_explain.log_nested_statements': 'on',
  'auto_explain.log_format': 'json',
  // The application name, so that the bench's own statements (scale-bench) are left out.
  log_line_prefix: "'%m [%p] %a: '",
};

async function setAutoExplain(pool, on) {
  for (const [k, v] of Object.entries(AUTO_EXPLAIN)) {
    await pool.query(on ? `ALTER SYSTEM SET ${k} = ${v}` : `ALTER SYSTEM RESET ${k}`);
  }
  await pool.query('SELECT pg_reload_conf()');
}

/** A plan as indented lines: each node, its table and index, conditions, rows, loops and buffers. */
function planText(node, depth = 0) {
  const pad = '  '.repeat(depth);
  const on = [
    node['Relation Name'] && `on ${node['Relation Name']}`,
    node['Index Name'] && `using ${node['Index Name']}`,
  ];
  const head = [node['Node Type'], ...on].filter(Boolean).join(' ');
  const buffers = `hit=${node['Shared Hit Blocks'] ?? 0} read=${node['Shared Read Blocks'] ?? 0}`;
  const lines = [
    `${pad}${head} (rows=${node['Actual Rows']} loops=${node['Actual Loops']} time=${node['Actual Total Time']} ms ${buffers})`,
  ];
  for (const k of ['Index Cond', 'Recheck Cond', 'Filter', 'Join Filter', 'Hash Cond', 'Sort Key']) {
    if (node[k]) lines.push(`${pad}  ${k}: ${Array.isArray(node[k]) ? node[k].join(', ') : node[k]}`);
  }
  for (const child of node.Plans ?? []) lines.push(planText(child, depth + 1));
  return lines.join('\n');
}

const nodes = (n) => [n, ...(n.Plans ?? []).flatMap(nodes)];

/**
 * The plans logged since byte `offset`: one per statement text, the last one run (after the first runs'
 * custom plans). The last entry may still be being written (the server goes on with its own work after
 * the capture), so an entry that is not yet whole JSON at the end of the file is left out.
 */
function plansSince(file, offset) {
  const text = readFileSync(file).subarray(offset).toString('utf8');
  const entries = text.split(/\n(?=\d{4}-\d\d-\d\d )/);
  const plans = new Map();
  for (const [i, entry] of entries.entries()) {
    const m = /LOG:\s+duration: ([\d.]+) ms\s+plan:\n([\s\S]*)$/.exec(entry);
    if (!m || entry.includes(' scale-bench: ')) continue;
    let doc;
    try {
      doc = JSON.parse(m[2].replace(/^\t/gm, ''));
    } catch (err) {
      if (i === entries.length - 1) continue;
      throw new Error(`a logged plan that is not JSON (${err.message}):\n${entry.slice(0, 3000)}`);
    }
    const query = doc['Query Text'].trim();
    plans.set(query, { ms: Number(m[1]), query, root: doc.Plan, plan: planText(doc.Plan) });
  }
  return [...plans.values()];
}

/** Tables with more rows than this are "big": a sequential scan of one on a request path is a finding. */
const BIG_ROWS = 10_000;

/**
 * Runs `work` on the world restarted with auto_explain on (and `env`): `work` is given capture(label, fn),
 * which runs fn and keeps, under label, the plans logged while it ran and the sequential scans of big
 * tables among them. auto_explain is off again afterwards.
 */
export async function withPlans(world, env, work) {
  const { rows } = await world.pool.query(
    `SELECT relname FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace AND reltuples > $1`,
    [BIG_ROWS],
  );
  const big = new Set(rows.map((r) => r.relname));
  const file = join(world.pgDir, 'log', 'postgresql.log');
  const out = {};
  await setAutoExplain(world.pool, true);
  try {
    await world.restart(env);
    await work(async (label, fn) => {
      const offset = statSync(file).size;
      await fn();
      await new Promise((r) => setTimeout(r, 300));
      const plans = plansSince(file, offset);
      const seqScans = plans.flatMap((p) =>
        nodes(p.root)
          .filter((n) => n['Node Type'] === 'Seq Scan' && big.has(n['Relation Name']))
          .map((n) => ({ table: n['Relation Name'], query: p.query })),
      );
      out[label] = { plans: plans.map((p) => ({ ms: p.ms, query: p.query, plan: p.plan })), seqScans };
    });
  } finally {
    await setAutoExplain(world.pool, false);
    await world.restart();
  }
  return out;
}

/**
 * Each request of `requests` run `times` times on one connection (enough for PostgreSQL to settle on a
 * generic or custom plan for the prepared statements): the plans of the last run of each statement.
 */
export const capturePlans = (world, requests, times = 8) =>
  withPlans(world, undefined, async (capture) => {
    for (const [label, make] of Object.entries(requests)) {
      await capture(label, async () => {
        for (let k = 0; k < times; k++) {
          const { method, path, headers, body } = make(k);
          const r = await fetch(world.origin + path, { method, headers, body });
          await r.arrayBuffer();
          if (r.status >= 300) throw new Error(`${label}: ${r.status}`);
        }
      });
    }
  });
