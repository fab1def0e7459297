// What every scenario of the benchmark shares: the settings, PostgreSQL, processes, the load generator and
// CPU accounting from /proc. See bench/README.md.
import http from 'node:http';
import net from 'node:net';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export const here = dirname(fileURLToPath(import.meta.url));
export const root = join(here, '..');
/** castsync's built modules (npm run bench builds first). */
export const require = createRequire(join(root, 'package.json'));
const { openEmbedded } = require('./dist/db/embedded.js');
const { createLogger } = require('./dist/logger.js');

const env = (k, d) => Number(process.env[k] ?? d);
export const USERS = env('USERS', 20),
  SUBS = env('SUBS', 1000),
  CONN = env('CONN', 16);
export const BIG_SUBS = env('BIG_SUBS', 100_000);
export const SECONDS = env('SECONDS', 6),
  ROUNDS = env('ROUNDS', 3),
  SCALE_USERS = env('SCALE_USERS', 2000);
export const PASSWORD = 'bench-password';
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const log = (...a) => console.error(...a);
/** urlHash() in SQL, for URLs that are their own matching key (lower-case scheme and host, a path). */
export const URL_HASH = (url) => `encode(substring(sha256(convert_to(${url}, 'UTF8')) FROM 1 FOR 16), 'hex')::uuid`;

export async function postgres() {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL, stop: async () => {} };
  const dir = mkdtempSync(join(tmpdir(), 'castsync-bench-pg-'));
  const db = await openEmbedded({ dataDir: dir, attach: false, logger: createLogger('warn') });
  return {
    url: db.url,
    stop: async () => {
      await db.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function startProcess(cmd, args, extraEnv, readyCheck) {
  // Its own process group, so that stopping it reaches the server under npm too.
  const child = spawn(cmd, args, {
    detached: true,
    cwd: root,
    env: { ...process.env, ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out = (out + d).slice(-10_000)));
  child.stderr.on('data', (d) => (out = (out + d).slice(-10_000)));
  /** The last 10,000 characters it wrote: what a failed run shows of the server. */
  child.output = () => out;
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited:\n${out}`);
    if (await readyCheck(out)) return child;
    await sleep(100);
  }
  throw new Error(`${args.join(' ')} did not start:\n${out}`);
}

let agent = new http.Agent({ keepAlive: true, maxSockets: CONN });
/** Keep-alive sockets to a stopped server are dead: a new agent for the next one. */
export function resetAgent() {
  agent.destroy();
  agent = new http.Agent({ keepAlive: true, maxSockets: CONN });
}
function request(origin, method, path, headers, body) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = http.request(origin + path, { method, headers, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, ms: Number(process.hrtime.bigint() - t0) / 1e6 }));
    });
    req.on('error', reject);
    if (body) req.end(body);
    else req.end();
  });
}
export async function json(origin, method, path, headers, body) {
  const r = await fetch(origin + path, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body && JSON.stringify(body),
  });
  return { status: r.status, headers: r.headers, body: await r.json() };
}

// A process's /proc/<pid>/stat fields after the command name (Linux): [0] state, [1] ppid, [2] pgrp,
// [7] minflt (minor page faults: pages mapped on first touch), [11] utime, [12] stime in ticks. Undefined
// once the process is gone.
const TICK_MS = 10;
function stat(pid) {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  } catch {
    return undefined;
  }
}
// CPU time (ms) each process still alive has used so far.
function cpuMs(pids) {
  const out = new Map();
  for (const pid of pids) {
    const f = stat(pid);
    if (f) out.set(pid, (Number(f[11]) + Number(f[12])) * TICK_MS);
  }
  return out;
}
// Minor page faults each process still alive has taken so far.
function faults(pids) {
  const out = new Map();
  for (const pid of pids) {
    const f = stat(pid);
    if (f) out.set(pid, Number(f[7]));
  }
  return out;
}
// Bytes a process has read and written through system calls so far (/proc/<pid>/io: sockets, pipes and
// files alike); zeros once it is gone.
function io(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/io`, 'utf8');
    return { read: Number(/^rchar: (\d+)/m.exec(text)[1]), written: Number(/^wchar: (\d+)/m.exec(text)[1]) };
  } catch {
    return { read: 0, written: 0 };
  }
}
// What the processes alive now used since `before` (those started since count from zero).
const usedSince = (now, before) => [...now].reduce((sum, [pid, n]) => sum + n - (before.get(pid) ?? 0), 0);
const cpuSince = (before, pids) => usedSince(cpuMs(pids), before);
const procs = () =>
  readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map((pid) => {
      try {
        return { pid, cmd: readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0') };
      } catch {
        return { pid, cmd: [] };
      }
    });
// The server process itself (under npm), and every process of the PostgreSQL cluster.
export const serverPid = (group, script) =>
  procs().find(
    (p) =>
      // node itself running the script (not the shell or cross-env that started it)
      /(^|\/)node$/.test(p.cmd[0] ?? '') &&
      !p.cmd.some((a) => a.includes('cross-env')) &&
      p.cmd.at(-2) === script &&
      stat(p.pid)?.[2] === String(group),
  )?.pid;
export const postgresPids = () =>
  procs()
    .filter((p) => /(^|\/)postgres$/.test(p.cmd[0] ?? '') || (p.cmd[0] ?? '').startsWith('postgres:'))
    .map((p) => p.pid);

/** The CPU the server (its pid) and the PostgreSQL cluster have used so far: what cpuUsed takes. */
export const cpuNow = (server) => ({ server: cpuMs([server]), postgres: cpuMs(postgresPids()) });
/** The CPU (ms) the server and the PostgreSQL cluster used since `before` (cpuNow). */
export const cpuUsed = (server, before) => ({
  server: cpuSince(before.server, [server]),
  postgres: cpuSince(before.postgres, postgresPids()),
});

export async function load(origin, makeRequest, seconds = SECONDS, conn = CONN, watch) {
  const cpu0 = watch && [cpuMs([watch]), cpuMs(postgresPids()), faults([watch]), faults(postgresPids()), io(watch)];
  const lat = [];
  let errors = 0,
    i = 0;
  const until = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: conn }, async () => {
      while (Date.now() < until) {
        const { method, path, headers, body } = makeRequest(i++);
        try {
          const r = await request(origin, method, path, headers, body);
          if (r.status >= 300) errors++;
          else lat.push(r.ms);
        } catch {
          errors++;
        }
      }
    }),
  );
  lat.sort((a, b) => a - b);
  const q = (p) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] ?? NaN;
  const cpu = watch && {
    server_cpu_ms: cpuSince(cpu0[0], [watch]) / lat.length,
    postgres_cpu_ms: cpuSince(cpu0[1], postgresPids()) / lat.length,
    // Fresh pages mapped per request: what a machine with dear pages pays fresh_page_us for each.
    server_faults: usedSince(faults([watch]), cpu0[2]) / lat.length,
    postgres_faults: usedSince(faults(postgresPids()), cpu0[3]) / lat.length,
    // Bytes the server read (from PostgreSQL and the clients) and wrote (to them) per request.
    server_read_bytes: (io(watch).read - cpu0[4].read) / lat.length,
    server_written_bytes: (io(watch).written - cpu0[4].written) / lat.length,
  };
  return { rps: lat.length / seconds, p50: q(0.5), p99: q(0.99), errors, ...cpu };
}
/** Resident memory (VmRSS) and its private anonymous part (RssAnon) of a process, in KiB; zeros once it is gone. */
function memoryKib(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name) => Number(status.match(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm'))?.[1] ?? 0);
    return { rss: field('VmRSS'), anon: field('RssAnon') };
  } catch {
    return { rss: 0, anon: 0 };
  }
}
const memorySum = (pids) =>
  pids.map(memoryKib).reduce((a, b) => ({ rss: a.rss + b.rss, anon: a.anon + b.anon }), { rss: 0, anon: 0 });

/**
 * Peak memory above idle while `work` runs, in MiB, sampled from /proc every 5 ms: of the castsync process
 * (RSS), and of all of the PostgreSQL cluster's processes together (the sum of their RSS, and of their
 * private anonymous memory, which leaves out the shared buffers a backend maps as it reads them). With the
 * CPU time (ms) both used, and the wall time.
 */
export async function peakMemory(serverPid, work) {
  const idle = { server: memoryKib(serverPid), postgres: memorySum(postgresPids()) };
  const peak = { server: 0, rss: 0, anon: 0 };
  const sample = () => {
    const s = memoryKib(serverPid).rss;
    const p = memorySum(postgresPids());
    peak.server = Math.max(peak.server, s);
    peak.rss = Math.max(peak.rss, p.rss);
    peak.anon = Math.max(peak.anon, p.anon);
  };
  const cpu0 = [cpuMs([serverPid]), cpuMs(postgresPids())];
  const t0 = performance.now();
  const timer = setInterval(sample, 5);
  try {
    sample();
    await work();
    sample();
  } finally {
    clearInterval(timer);
  }
  const mib = (kib) => Math.max(0, kib) / 1024;
  return {
    server_mib: mib(peak.server - idle.server.rss),
    postgres_rss_mib: mib(peak.rss - idle.postgres.rss),
    postgres_private_mib: mib(peak.anon - idle.postgres.anon),
    server_cpu_ms: cpuSince(cpu0[0], [serverPid]),
    postgres_cpu_ms: cpuSince(cpu0[1], postgresPids()),
    ms: performance.now() - t0,
  };
}

/** A GET whose body is counted, not kept: its status and length in bytes. */
export function download(origin, path, headers) {
  return new Promise((resolve, reject) => {
    const req = http.request(origin + path, { headers, agent }, (res) => {
      let bytes = 0;
      res.on('data', (d) => (bytes += d.length));
      res.on('end', () => resolve({ status: res.statusCode, bytes, complete: res.complete }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * What a fresh page of memory costs this machine: a 200 MiB buffer the process has never touched, one
 * write to each 4 KiB page, in µs a page (median of three buffers). Each page is mapped on its first
 * touch; on a virtual machine that lends its memory back (a memory balloon) that costs ten times more
 * than on bare metal, and every large answer built in memory pays it.
 */
export function freshPageMicros() {
  const size = 200 * 2 ** 20;
  const page = 4096;
  const times = [];
  for (let k = 0; k < 3; k++) {
    const buf = Buffer.allocUnsafeSlow(size);
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < size; i += page) buf[i] = 1;
    times.push(Number(process.hrtime.bigint() - t0) / 1e3 / (size / page));
  }
  return median(times);
}

/**
 * What moving bytes through a loopback socket costs this machine: 64 MiB written in 100 KiB pieces to a
 * server in this process that reads them, in µs of CPU (both ends, user and system) per 100 KiB, median
 * of three. Every answer pays it twice on its way (PostgreSQL to the server, the server to the client);
 * with fresh_page_us it tells two machines' figures apart.
 */
export async function loopbackCopyMicros() {
  const piece = Buffer.alloc(100 * 1024, 'x');
  const pieces = 640;
  const once = async () => {
    let received = 0;
    const server = net.createServer((s) => s.on('data', (d) => (received += d.length)));
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    const socket = net.connect(server.address().port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < pieces; i++) {
      if (!socket.write(piece)) await new Promise((r) => socket.once('drain', r));
    }
    while (received < pieces * piece.length) await new Promise((r) => setImmediate(r));
    const cpu = process.cpuUsage(cpu0);
    socket.destroy();
    server.close();
    return (cpu.user + cpu.system) / pieces;
  };
  const times = [];
  for (let k = 0; k < 3; k++) times.push(await once());
  return median(times);
}

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
export const round = (_, x) => (typeof x === 'number' ? Math.round(x * 100) / 100 : x);

/** Stops a process started by startProcess (its whole group), and waits for it. */
export const stop = (p) =>
  p &&
  p.exitCode === null &&
  new Promise((r) => {
    p.once('exit', r);
    process.kill(-p.pid, 'SIGTERM');
  });

/** The figures of a small and a large user side by side, `[small, large]`, with the p50 ratio large ÷ small. */
export const sideBySide = (small, large) =>
  Object.fromEntries(
    Object.keys(small).map((k) => [
      k,
      {
        p50_ms: [small[k].p50_ms, large[k].p50_ms],
        p99_ms: [small[k].p99_ms, large[k].p99_ms],
        rps: [small[k].rps, large[k].rps],
        p50_ratio: large[k].p50_ms / small[k].p50_ms,
        errors: small[k].errors + large[k].errors,
      },
    ]),
  );

/** Each `[label, makeRequest]` loaded in turn: p50, p99, req/s and errors by label. */
export async function figuresOf(origin, requests, conn = CONN) {
  const figures = {};
  for (const [label, make] of requests) {
    const r = await load(origin, make, SECONDS, conn);
    figures[label] = { p50_ms: r.p50, p99_ms: r.p99, rps: r.rps, errors: r.errors };
  }
  return figures;
}

/** A user's episode actions uploaded through the gpodder API, 2,000 a request. */
export async function uploadActions(origin, user, actions) {
  for (let i = 0; i < actions.length; i += 2000) {
    const r = await json(
      origin,
      'POST',
      `/api/2/episodes/${user.name}.json`,
      { authorization: user.basic },
      actions.slice(i, i + 2000),
    );
    if (r.status !== 200) throw new Error(`episode actions upload ${r.status}`);
  }
}
