import dns from 'node:dns';
import { readFile } from 'node:fs/promises';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** The addresses of a host name: of one family (4 or 6), or of both (0). */
export type ResolveHost = (hostname: string, family: number) => Promise<dns.LookupAddress[]>;

/** Once one family's addresses are in, how long the other's query still has (RFC 8305's resolution delay). */
const RESOLUTION_DELAY_MS = 50;

/** DNS failures that are an answer (no such name, no address of the family) or no server listening. */
const NOT_IN_DNS = new Set<string>([dns.NOTFOUND, dns.NODATA, dns.CONNREFUSED]);

type Settings = {
  /** The DNS servers asked ("address" or "address:port"); the system's (/etc/resolv.conf) by default. */
  servers?: string[];
  /** How long a query waits for an answer before it asks again, and how many times it asks. */
  timeoutMs?: number;
  tries?: number;
  hostsFile?: string;
};

/**
 * How the feed fetcher and notifications find a host's addresses: the hosts file, then the DNS servers,
 * asked directly (c-ares, which waits on the event loop). Not the system's getaddrinfo (dns.lookup): it
 * blocks a thread of libuv's pool (four threads) until the DNS answers, and the name servers of a dead
 * podcast host often never do, or a lost packet costs the resolver's whole timeout (5 s). Each such feed
 * held a thread that long; a few at once held every thread, and all else that runs there waited: password
 * hashing at sign-in, compression, reading files. A process cannot exit while a pool thread is busy
 * either, so a shutdown waited for those lookups after everything else had stopped.
 *
 * What the DNS cannot know is still asked of the system when the DNS has no answer: a name without a
 * dot (the resolver's search domains) and one under `.local` (multicast DNS). A query the DNS servers do
 * not answer fails the fetch with ETIMEOUT after `timeoutMs` × `tries`.
 */
export function dnsResolver({
  servers,
  timeoutMs = 2000,
  tries = 2,
  hostsFile = '/etc/hosts',
}: Settings = {}): ResolveHost {
  return async (hostname, family) => {
    const name = hostname.toLowerCase().replace(/\.$/, '');
    const listed = await fromHostsFile(hostsFile, name, family);
    if (listed.length > 0) return listed;
    // A resolver a lookup: it reads the system's servers as they are now, and its queries end with it.
    const resolver = new dns.promises.Resolver({ timeout: timeoutMs, tries });
    if (servers) resolver.setServers(servers);
    const families = family === 4 || family === 6 ? [family] : [4, 6];
    try {
      const { found, errors } = await gather(families.map((f) => query(resolver, name, f)));
      if (found.length > 0) return found;
      const code = (e: unknown) => (e as NodeJS.ErrnoException).code ?? '';
      if (errors.every((e) => NOT_IN_DNS.has(code(e))) && beyondDns(name)) {
        return await dns.promises.lookup(name, { family, all: true });
      }
      throw errors.find((e) => !NOT_IN_DNS.has(code(e))) ?? errors[0];
    } finally {
      resolver.cancel();
    }
  };
}

/** A name the DNS servers cannot know: one without a dot (search domains), or under .local (multicast DNS). */
const beyondDns = (name: string) => !name.includes('.') || name.endsWith('.local');

/** The addresses a hosts file (hosts(5): an address, then its names) gives the name, in the file's order. */
async function fromHostsFile(file: string, name: string, family: number): Promise<dns.LookupAddress[]> {
  let text: string;
  try {
    text = await readFile(file, 'latin1');
  } catch {
    return [];
  }
  const out: dns.LookupAddress[] = [];
  for (const line of text.split('\n')) {
    const [address, ...names] = line.replace(/#.*/, '').trim().split(/\s+/);
    const f = net.isIP(address ?? '');
    if (f === 0 || (family !== 0 && f !== family)) continue;
    if (names.some((n) => n.toLowerCase() === name)) out.push({ address: address!, family: f });
  }
  return out;
}

/** The addresses of one family. */
async function query(resolver: dns.promises.Resolver, hostname: string, family: number) {
  const addresses = await (family === 4 ? resolver.resolve4(hostname) : resolver.resolve6(hostname));
  if (addresses.length === 0) throw Object.assign(new Error(`no address of ${hostname}`), { code: dns.NODATA });
  return addresses.map((address) => ({ address, family }));
}

/**
 * The addresses the queries found, in the queries' order, and their failures: once a query has found
 * addresses, the others have RESOLUTION_DELAY_MS more, so that a server that never answers for one family
 * (some drop AAAA queries) does not hold up a host that has addresses of the other.
 */
async function gather(queries: Promise<dns.LookupAddress[]>[]) {
  const results: (dns.LookupAddress[] | undefined)[] = queries.map(() => undefined);
  const errors: unknown[] = [];
  const settled = queries.map((q, i) =>
    q.then(
      (found) => void (results[i] = found),
      (err: unknown) => void errors.push(err),
    ),
  );
  const firstFound = Promise.any(queries).then(
    () => sleep(RESOLUTION_DELAY_MS),
    () => Promise.all(settled),
  );
  await Promise.race([Promise.all(settled), firstFound]);
  return { found: results.flatMap((r) => r ?? []), errors };
}

/** The resolver of the running server: the system's hosts file and DNS servers. */
export const resolveHost: ResolveHost = dnsResolver();
