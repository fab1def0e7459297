// The chart of docs/performance.md: each request's p99 latency against the number of episode actions in the
// database, from the scale bench's results (bench/scale/results/*.json), as an SVG.
//   node bench/scale/chart.mjs [results-dir] [out.svg]
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2] ?? join(import.meta.dirname, 'results');
const out = process.argv[3] ?? join(import.meta.dirname, '..', '..', 'docs', 'scale-latency.svg');
const runs = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')))
  .filter((r) => r.reads && r.writes);

/** p99 by request, at each size (actions): the baselines of all runs averaged into one point. */
const series = new Map();
for (const r of runs) {
  for (const [k, v] of Object.entries({ ...r.reads, ...r.writes })) {
    const points = series.get(k) ?? new Map();
    for (const [side, actions] of [
      ['baseline', r.sizes.baseline.actions],
      ['scale', r.sizes.scale.actions],
    ]) {
      points.set(actions, [...(points.get(actions) ?? []), v[side].p99_ms]);
    }
    series.set(k, points);
  }
}
const lines = [...series].map(([k, points]) => ({
  k,
  points: [...points].map(([x, ys]) => [x, ys.reduce((a, b) => a + b, 0) / ys.length]).sort((a, b) => a[0] - b[0]),
}));

const W = 760,
  H = 420,
  left = 60,
  right = 200,
  top = 30,
  bottom = 50;
const xs = lines.flatMap((l) => l.points.map((p) => p[0]));
const [lo, hi] = [Math.floor(Math.log10(Math.min(...xs))), Math.ceil(Math.log10(Math.max(...xs)))];
const ys = lines.flatMap((l) => l.points.map((p) => p[1]));
const [yLo, yHi] = [Math.floor(Math.log10(Math.min(...ys))), Math.ceil(Math.log10(Math.max(...ys)))];
const x = (v) => left + ((Math.log10(v) - lo) / (hi - lo)) * (W - left - right);
const y = (v) => H - bottom - ((Math.log10(v) - yLo) / (yHi - yLo)) * (H - top - bottom);
const colours = ['#1b6ac9', '#d9480f', '#2b8a3e', '#862e9c', '#c92a2a', '#e67700', '#0b7285', '#5c5f66'];
const text = (tx, ty, s, extra = '') => `<text x="${tx}" y="${ty}" ${extra}>${s}</text>`;
const parts = [
  `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
  `<rect width="${W}" height="${H}" fill="white"/>`,
  text(
    left,
    18,
    'p99 latency (ms, log scale) at 16 connections, by episode actions in the database',
    'font-weight="bold"',
  ),
];
for (let e = lo; e <= hi; e++) {
  parts.push(`<line x1="${x(10 ** e)}" y1="${top}" x2="${x(10 ** e)}" y2="${H - bottom}" stroke="#ddd"/>`);
  parts.push(text(x(10 ** e), H - bottom + 16, `10^${e}`, 'text-anchor="middle"'));
}
for (let e = yLo; e <= yHi; e++) {
  for (const m of e < yHi ? [1, 2, 5] : [1]) {
    const v = m * 10 ** e;
    parts.push(
      `<line x1="${left}" y1="${y(v)}" x2="${W - right}" y2="${y(v)}" stroke="${m === 1 ? '#ccc' : '#eee'}"/>`,
    );
    parts.push(text(left - 6, y(v) + 4, String(v), 'text-anchor="end"'));
  }
}
parts.push(text((left + W - right) / 2, H - 12, 'episode actions in the database (log scale)', 'text-anchor="middle"'));
lines.forEach((l, i) => {
  const c = colours[i % colours.length];
  parts.push(
    `<polyline fill="none" stroke="${c}" stroke-width="2" points="${l.points.map(([a, b]) => `${x(a)},${y(b)}`).join(' ')}"/>`,
  );
  for (const [a, b] of l.points) parts.push(`<circle cx="${x(a)}" cy="${y(b)}" r="3" fill="${c}"/>`);
  parts.push(`<rect x="${W - right + 16}" y="${top + i * 20}" width="12" height="3" fill="${c}"/>`);
  parts.push(text(W - right + 34, top + i * 20 + 5, l.k.replaceAll('_', ' ')));
});
parts.push('</svg>');
writeFileSync(out, parts.join('\n') + '\n');
console.log(`${out}: ${lines.length} requests, ${xs.length} points`);
