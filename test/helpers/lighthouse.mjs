// Lighthouse on one page, in a child process (Lighthouse is an ES module, which jest's CommonJS cannot
// load): `node test/helpers/lighthouse.mjs PORT URL [HEADERS_JSON]` audits URL in the Chromium whose
// DevTools listen on PORT, at Lighthouse's default settings (a phone, simulated throttling), and prints
// one line of JSON: each category's score and every audit that did not pass (id, title, displayValue).
// The whole report goes to the file LIGHTHOUSE_REPORT names, when it is set.
import { writeFileSync } from 'node:fs';
import lighthouse from 'lighthouse';

const [port, url, headers] = process.argv.slice(2);
const CATEGORIES = ['performance', 'accessibility', 'best-practices'];
const result = await lighthouse(url, {
  port: Number(port),
  output: 'json',
  logLevel: 'error',
  onlyCategories: CATEGORIES,
  extraHeaders: headers ? JSON.parse(headers) : undefined,
});
if (!result) throw new Error(`Lighthouse gave no result for ${url}`);
const { lhr } = result;
if (process.env.LIGHTHOUSE_REPORT) writeFileSync(process.env.LIGHTHOUSE_REPORT, result.report);
const scores = Object.fromEntries(CATEGORIES.map((c) => [c, lhr.categories[c]?.score ?? null]));
const audited = new Set(CATEGORIES.flatMap((c) => lhr.categories[c]?.auditRefs.map((a) => a.id) ?? []));
const failing = Object.values(lhr.audits)
  .filter((a) => audited.has(a.id) && a.score !== null && a.score < 1 && a.scoreDisplayMode !== 'informative')
  .map((a) => ({ id: a.id, title: a.title, score: a.score, displayValue: a.displayValue }));
const metrics = Object.fromEntries(
  [
    'first-contentful-paint',
    'largest-contentful-paint',
    'total-blocking-time',
    'cumulative-layout-shift',
    'speed-index',
  ].map((id) => [id, lhr.audits[id]?.numericValue]),
);
process.stdout.write(
  JSON.stringify({
    url,
    finalUrl: lhr.finalDisplayedUrl,
    scores,
    failing,
    metrics,
    runtimeError: lhr.runtimeError?.message,
    warnings: lhr.runWarnings,
  }) + '\n',
);
