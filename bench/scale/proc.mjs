// What the scale bench reads from /proc (Linux) about the processes it measures: one PostgreSQL cluster's
// processes (not every postgres on the machine), their CPU time, and resident memory sampled while a
// measurement runs.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const read = (path) => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};
/** Fields after the command name: [1] ppid, [11] utime, [12] stime (ticks of 10 ms). */
const stat = (pid) => read(`/proc/${pid}/stat`)?.split(') ')[1]?.split(' ');
/** kB of a /proc/<pid>/status line (VmRSS, VmHWM, RssAnon, RssShmem). */
const statusKb = (pid, field) =>
  Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(read(`/proc/${pid}/status`) ?? '')?.[1] ?? 0);

/** The postmaster of the cluster in pgDir and its children. */
export function clusterPids(pgDir) {
  const postmaster = read(join(pgDir, 'postmaster.pid'))?.split('\n')[0];
  if (!postmaster) return [];
  const children = readdirSync('/proc').filter((d) => /^\d+$/.test(d) && stat(d)?.[1] === postmaster);
  return [postmaster, ...children];
}

/** CPU time (ms) used so far by these processes, summed. */
export const cpuMs = (pids) =>
  pids.reduce((sum, pid) => {
    const f = stat(pid);
    return f ? sum + (Number(f[11]) + Number(f[12])) * 10 : sum;
  }, 0);

/** Peak resident memory of a process since it started (MiB). */
export const peakRssMib = (pid) => statusKb(pid, 'VmHWM') / 1024;

/**
 * Samples every `ms` until stopped: the node process's resident memory, and the cluster's (every process's
 * private memory, plus the shared memory the largest one has touched: shared buffers counted once). Peaks in MiB.
 */
export function sampleMemory(nodePid, pgDir, ms = 200) {
  const peak = { node_rss_mib: 0, postgres_rss_mib: 0 };
  const sample = () => {
    const pids = clusterPids(pgDir);
    const anon = pids.reduce((s, p) => s + statusKb(p, 'RssAnon'), 0);
    const shared = Math.max(0, ...pids.map((p) => statusKb(p, 'RssShmem')));
    peak.node_rss_mib = Math.max(peak.node_rss_mib, statusKb(nodePid, 'VmRSS') / 1024);
    peak.postgres_rss_mib = Math.max(peak.postgres_rss_mib, (anon + shared) / 1024);
  };
  sample();
  const timer = setInterval(sample, ms);
  return () => {
    clearInterval(timer);
    sample();
    return peak;
  };
}
