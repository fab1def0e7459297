// Both benches at a tiny size, as the last step of `npm test`: their scenarios seed PostgreSQL with SQL of
// their own, which a migration can break without any test noticing until someone measures. The figures of
// so small a run mean nothing and are not looked at; the run fails if a bench fails (a scenario throws, its
// exit status is not 0), if a request of it failed (an `errors` or `failed` count that is not 0), or if it
// no longer says what machine it ran on. After a build: `node bench/smoke.mjs`.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');

/** Runs a bench script with these settings; its standard output. */
function run(script, env) {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    execFile(
      process.execPath,
      [script],
      { cwd: root, env: { ...process.env, ...env }, maxBuffer: 64 * 2 ** 20, timeout: 15 * 60_000 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`${script} failed (${err.message}):\n${stderr.slice(-5000)}`));
        else {
          console.log(`${script}: ran in ${Math.round((Date.now() - t0) / 1000)} s`);
          resolve(stdout);
        }
      },
    );
  });
}

/** The paths of every count of failed requests that is not 0. */
function failures(figures, path = '') {
  return Object.entries(figures).flatMap(([k, v]) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) return failures(v, `${path}/${k}`);
    return /^(castsync_)?(errors|failed)$/.test(k) && v !== 0 ? [`${path}/${k} = ${JSON.stringify(v)}`] : [];
  });
}

/** Fails unless every request of the run was answered and it names the machine's figures (`machine`). */
function check(name, figures, machine) {
  const failed = failures(figures);
  if (failed.length > 0) throw new Error(`${name}: requests failed:\n${failed.join('\n')}`);
  for (const [label, value] of Object.entries(machine)) {
    if (typeof value !== 'number') throw new Error(`${name}: it no longer says ${label}`);
  }
}

const out = await run('bench/run.mjs', {
  USERS: '2',
  SUBS: '20',
  CONN: '2',
  SECONDS: '0.5',
  ROUNDS: '1',
  SCALE_USERS: '0',
});
const bench = JSON.parse(out.trim().split('\n').at(-1)).bench;
check('npm run bench', bench, {
  'what a fresh page costs': bench.fresh_page_us,
  'what a loopback copy costs': bench.loopback_copy_us_per_100kib,
});

const dir = mkdtempSync(join(tmpdir(), 'castsync-bench-smoke-'));
try {
  await run('bench/scale/run.mjs', {
    SCALE: '0.0005',
    CONN: '2',
    SECONDS: '0.5',
    ROUNDS: '1',
    FETCH_FEEDS: '50',
    SCALE_RESULTS: join(dir, 'scale.json'),
  });
  const scale = JSON.parse(readFileSync(join(dir, 'scale.json'), 'utf8'));
  check('npm run bench:scale', scale, { 'how many cores it had': scale.machine?.cpus });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
// The machine's figures, printed last so that a CI log shows what kind of machine ran it.
console.log(
  `both benches ran, every request answered; this machine: a fresh page ${bench.fresh_page_us} µs, ` +
    `a loopback copy ${bench.loopback_copy_us_per_100kib} µs per 100 KiB`,
);
