import dns from 'node:dns';
import { readFile, stat } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The addresses of a host name: of one family (4 or 6), or of those the machine has (0); `hints` as
 * dns.lookup takes them (ADDRCONFIG); a lookup whose `signal` aborts stops asking.
 */
export type ResolveHost = (
  hostname: string,
  family: number,
  options?: { hints?: number; signal?: AbortSignal },
) => Promise<dns.LookupAddress[]>;

/** Once the IPv4 addresses are in, how long the IPv6 query still has (RFC 8305's resolution delay). */
const RESOLUTION_DELAY_MS = 50;

/** DNS failures that are an answer: no such name, or no address of the family. */
const NOT_IN_DNS = new Set<string>([dns.NOTFOUND, dns.NODATA]);
const notInDns = (e: unknown) => NOT_IN_DNS.has((e as NodeJS.ErrnoException).code ?? '');

type Settings = {
  /** The DNS servers asked ("address" or "address:port"); the system's (/etc/resolv.conf) by default. */
  servers?: string[];
  /** How long a query waits for its first answer (each retry waits twice as long), and how many times it asks. */
  timeoutMs?: number;
  tries?: number;
  hostsFile?: string;
  resolvConf?: string;
  /** The system's own lookup (getaddrinfo), for the names only the system can resolve. */
  system?: (name: string, family: number) => Promise<dns.LookupAddress[]>;
  /** The machine's network interfaces, for ADDRCONFIG. */
  interfaces?: () => NodeJS.Dict<os.NetworkInterfaceInfo[]>;
};

const systemLookup = (name: string, family: number) => dns.promises.lookup(name, { family, all: true });

/**
 * How the feed fetcher and notifications find a host's addresses: the hosts file, then the DNS servers,
 * asked directly (c-ares, which waits on the event loop). Not the system's getaddrinfo (dns.lookup): it
 * blocks a thread of libuv's pool (four threads) until the DNS answers, and the name servers of a dead
 * podcast host often never do, or a lost packet costs glibc's whole timeout (5 s). Each such feed held a
 * thread that long; a few at once held every thread, and all else that runs there waited: password
 * hashing at sign-in, compression, reading files. A process cannot exit while a pool thread is busy
 * either, so a shutdown waited for those lookups after everything else had stopped.
 *
 * What only the system can resolve is still asked of it: a name without a dot (search domains, a
 * resolver's own names) or under `.local` (multicast DNS), and, when resolv.conf names search domains,
 * a name the DNS does not know (`svc.namespace` in a cluster). IPv4 addresses come first; IPv6 ones that
 * are not in within RESOLUTION_DELAY_MS of them are left out (some servers drop AAAA queries).
 */
export function dnsResolver({
  servers,
  timeoutMs = 2000,
  tries = 2,
  hostsFile = '/etc/hosts',
  resolvConf = '/etc/resolv.conf',
  system = systemLookup,
  interfaces = os.networkInterfaces,
}: Settings = {}): ResolveHost {
  const hosts = fileCache(hostsFile, parseHosts, new Map<string, dns.LookupAddress[]>());
  // systemd-resolved writes `search .` when there are none.
  const searches = fileCache(resolvConf, (text) => /^\s*(search|domain)\s+(?!\.(\s|$))\S/m.test(text), false);
  return async (hostname, family, { hints = 0, signal } = {}) => {
    const name = hostname.toLowerCase().replace(/\.$/, '');
    const literal = net.isIP(name);
    if (literal !== 0) return [{ address: name, family: literal }];
    if (name === '') throw Object.assign(new Error(`no host name`), { code: dns.NOTFOUND });
    const listed = ((await hosts()).get(name) ?? []).filter(
      (a: dns.LookupAddress) => family === 0 || a.family === family,
    );
    if (listed.length > 0) return listed;
    // An abort that came before (between a redirect's hops, or while the files were read).
    signal?.throwIfAborted();
    if (!name.includes('.') || name.endsWith('.local')) return system(name, family);

    // A resolver a lookup: it reads the system's servers as they are now, and its queries end with it.
    const resolver = new dns.promises.Resolver({ timeout: timeoutMs, tries });
    if (servers) resolver.setServers(servers);
    const cancel = () => resolver.cancel();
    signal?.addEventListener('abort', cancel);
    try {
      const { found, errors } = await gather(familiesFor(family, hints, interfaces), (f) => query(resolver, name, f));
      if (found.length > 0) return found;
      if (errors.every(notInDns) && (process.env.LOCALDOMAIN || (await searches()))) {
        signal?.throwIfAborted();
        return await system(name, family);
      }
      throw errors.find((e) => !notInDns(e)) ?? errors[0];
    } finally {
      signal?.removeEventListener('abort', cancel);
      resolver.cancel();
    }
  };
}

/** The families to ask for: the one asked, or both; with ADDRCONFIG, those the machine has an address of. */
function familiesFor(family: number, hints: number, interfaces: Settings['interfaces'] & {}): number[] {
  if (family === 4 || family === 6) return [family];
  if ((hints & dns.ADDRCONFIG) === 0) return [4, 6];
  let list: NodeJS.Dict<os.NetworkInterfaceInfo[]>;
  try {
    list = interfaces();
  } catch {
    return [4, 6]; // a sandbox that does not let the process list its interfaces
  }
  const configured = new Set<number>(
    Object.values(list)
      .flat()
      .filter((i) => i && !i.internal && !i.address.toLowerCase().startsWith('fe80:'))
      .map((i) => (String(i!.family) === 'IPv6' || String(i!.family) === '6' ? 6 : 4)),
  );
  const families = [4, 6].filter((f) => configured.has(f));
  return families.length > 0 ? families : [4, 6];
}

/** The addresses of one family. */
async function query(resolver: dns.promises.Resolver, hostname: string, family: number) {
  const addresses = await (family === 4 ? resolver.resolve4(hostname) : resolver.resolve6(hostname));
  if (addresses.length === 0) throw Object.assign(new Error(`no address of ${hostname}`), { code: dns.NODATA });
  return addresses.map((address) => ({ address, family }));
}

/**
 * The addresses of the families asked, IPv4 first, and the queries' failures. Both are asked at once; the
 * answer waits for the IPv4 query, and then for the IPv6 one at most RESOLUTION_DELAY_MS (all of it if
 * there was no IPv4 address).
 */
async function gather(families: number[], ask: (family: number) => Promise<dns.LookupAddress[]>) {
  const errors: unknown[] = [];
  const settle = (family: number) =>
    ask(family).catch((err: unknown) => {
      errors.push(err);
      return [];
    });
  const [first, second] = families.map(settle) as [Promise<dns.LookupAddress[]>, Promise<dns.LookupAddress[]>?];
  const found = await first;
  if (!second) return { found, errors };
  const more = found.length > 0 ? await Promise.race([second, sleep(RESOLUTION_DELAY_MS, [])]) : await second;
  return { found: [...found, ...more], errors };
}

/** A file's parsed content, read again when it changes; `empty` while it cannot be read. */
function fileCache<T>(file: string, parse: (text: string) => T, empty: T): () => Promise<T> {
  let cached: { mtimeMs: number; size: number; value: T } | undefined;
  return async () => {
    const st = await stat(file).catch(() => undefined);
    if (!st) return empty;
    if (cached?.mtimeMs !== st.mtimeMs || cached.size !== st.size) {
      const text = await readFile(file, 'latin1').catch(() => undefined);
      if (text === undefined) return empty;
      cached = { mtimeMs: st.mtimeMs, size: st.size, value: parse(text) };
    }
    return cached.value;
  };
}

/** A hosts file (hosts(5): an address, then its names; # starts a comment): each name's addresses, in order. */
function parseHosts(text: string): Map<string, dns.LookupAddress[]> {
  const out = new Map<string, dns.LookupAddress[]>();
  for (const line of text.split('\n')) {
    const [address = '', ...names] = line.replace(/#.*/, '').trim().split(/\s+/);
    const family = address.includes('%') ? 0 : net.isIP(address);
    if (family === 0) continue;
    for (const n of names) {
      const key = n.toLowerCase();
      out.set(key, [...(out.get(key) ?? []), { address, family }]);
    }
  }
  return out;
}

/** The resolver of the running server: the system's hosts file and DNS servers. */
export const resolveHost: ResolveHost = dnsResolver();
