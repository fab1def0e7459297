// The chart of docs/performance.md, from the scale bench's results (bench/scale/results/*.json), as an SVG:
// above, each request's p99 latency against the number of episode actions in the database, each run a
// segment from its baseline to its data set (the two measured in turn, on the same machine at the same
// time); below, the ratio of the two, which is what compares across runs, with the issue's 1.5 line.
//   node bench/scale/chart.mjs [results-dir] [out.svg]
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2] ?? join(import.meta.dirname, 'results');
const out = process.argv[3] ?? join(import.meta.dirname, '..', '..', 'docs', 'scale-latency.svg');
const runs = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')))
  .filter((r) => r.reads && r.writes)
  .sort((a, b) => a.scale - b.scale);
const labels = Object.keys({ ...runs[0].reads, ...runs[0].writes });
const figure = (r, k) => ({ ...r.reads, ...r.writes })[k];

const W = 760,
  left = 60,
  right = 200,
  panel = 260,
  gap = 70,
  top = 40;
const H = top + 2 * panel + gap + 50;
const xs = runs.flatMap((r) => [r.sizes.baseline.actions, r.sizes.scale.actions]);
const [lo, hi] = [Math.floor(Math.log10(Math.min(...xs))), Math.ceil(Math.log10(Math.max(...xs)))];
const x = (v) => left + ((Math.log10(v) - lo) / (hi - lo)) * (W - left - right);
const p99s = runs.flatMap((r) => labels.flatMap((k) => [figure(r, k).baseline.p99_ms, figure(r, k).scale.p99_ms]));
const [yLo, yHi] = [Math.floor(Math.log10(Math.min(...p99s))), Math.ceil(Math.log10(Math.max(...p99s)))];
const y = (v) => top + panel - ((Math.log10(v) - yLo) / (yHi - yLo)) * panel;
const ratioTop = top + panel + gap;
const rMax = 2;
const yr = (v) => ratioTop + panel - (v / rMax) * panel;
const colours = ['#1b6ac9', '#d9480f', '#2b8a3e', '#862e9c', '#c92a2a', '#e67700', '#0b7285', '#5c5f66'];
const text = (tx, ty, s, extra = '') => `<text x="${tx}" y="${ty}" ${extra}>${s}</text>`;
const hline = (yy, stroke, extra = '') =>
  `<line x1="${left}" y1="${yy}" x2="${W - right}" y2="${yy}" stroke="${stroke}" ${extra}/>`;
const parts = [
  `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
  `<rect width="${W}" height="${H}" fill="white"/>`,
  text(
    left,
    18,
    'p99 latency (ms, log scale), 16 connections: each run from its baseline to its data set',
    'font-weight="bold"',
  ),
  text(left, ratioTop - 14, 'p99 of the data set ÷ p99 of the baseline, in the same run', 'font-weight="bold"'),
];
for (let e = lo; e <= hi; e++) {
  for (const [t, b] of [
    [top, top + panel],
    [ratioTop, ratioTop + panel],
  ]) {
    parts.push(`<line x1="${x(10 ** e)}" y1="${t}" x2="${x(10 ** e)}" y2="${b}" stroke="#ddd"/>`);
  }
  parts.push(text(x(10 ** e), ratioTop + panel + 16, `10^${e}`, 'text-anchor="middle"'));
}
for (let e = yLo; e <= yHi; e++) {
  for (const m of e < yHi ? [1, 2, 5] : [1]) {
    parts.push(hline(y(m * 10 ** e), m === 1 ? '#ccc' : '#eee'));
    parts.push(text(left - 6, y(m * 10 ** e) + 4, String(m * 10 ** e), 'text-anchor="end"'));
  }
}
for (let v = 0; v <= rMax; v += 0.5) {
  parts.push(hline(yr(v), v === 1.5 ? '#c92a2a' : '#eee', v === 1.5 ? 'stroke-dasharray="6 4"' : ''));
  parts.push(text(left - 6, yr(v) + 4, v.toFixed(1), 'text-anchor="end"'));
}
parts.push(text(W - right + 4, yr(1.5) + 4, 'goal: at most 1.5', 'fill="#c92a2a"'));
parts.push(text((left + W - right) / 2, H - 12, 'episode actions in the database (log scale)', 'text-anchor="middle"'));
labels.forEach((k, i) => {
  const c = colours[i % colours.length];
  const ratio = [[runs[0].sizes.baseline.actions, 1]];
  for (const r of runs) {
    const f = figure(r, k);
    const [a, b] = [r.sizes.baseline.actions, r.sizes.scale.actions];
    parts.push(
      `<line x1="${x(a)}" y1="${y(f.baseline.p99_ms)}" x2="${x(b)}" y2="${y(f.scale.p99_ms)}" stroke="${c}" stroke-width="2"/>`,
      `<circle cx="${x(a)}" cy="${y(f.baseline.p99_ms)}" r="3" fill="${c}"/>`,
      `<circle cx="${x(b)}" cy="${y(f.scale.p99_ms)}" r="3" fill="${c}"/>`,
    );
    ratio.push([b, f.p99_ratio]);
  }
  parts.push(
    `<polyline fill="none" stroke="${c}" stroke-width="2" points="${ratio.map(([a, b]) => `${x(a)},${yr(b)}`).join(' ')}"/>`,
    ...ratio.map(([a, b]) => `<circle cx="${x(a)}" cy="${yr(b)}" r="3" fill="${c}"/>`),
    `<rect x="${W - right + 16}" y="${top + i * 20}" width="12" height="3" fill="${c}"/>`,
    text(W - right + 34, top + i * 20 + 5, k.replaceAll('_', ' ')),
  );
});
parts.push('</svg>');
writeFileSync(out, parts.join('\n') + '\n');
console.log(`${out}: ${labels.length} requests, ${runs.length} runs`);
