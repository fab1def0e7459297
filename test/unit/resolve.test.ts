import dns from 'node:dns';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { dnsResolver } from '../../src/feeds/resolve';
import { startDnsServer, type DnsAnswer, type DnsServer } from '../helpers/dns-server';
import { tempDirForFile } from '../helpers/tmp';

// The fetcher's resolver reads the hosts file and asks DNS servers itself, on the event loop; the system
// only about the names only it can resolve. A silent name server holds no thread and fails the lookup in
// its time.

const dir = tempDirForFile('castsync-resolve-');
const none = path.join(dir, 'none');
const servers: DnsServer[] = [];
afterAll(() => Promise.all(servers.map((s) => s.close())));
async function dnsServer(answer: (name: string, type: 'A' | 'AAAA') => DnsAnswer) {
  const server = await startDnsServer(answer);
  servers.push(server);
  return server;
}

const V4 = '93.184.215.14';
const V6 = '2606:2800:21f:cb07:6820:80da:af6b:8b2c';

/** A resolver on `server` with no hosts file and no search domains, whose calls to the system are noted. */
function resolverOn(server: DnsServer, more: Parameters<typeof dnsResolver>[0] = {}) {
  const system: string[] = [];
  const resolve = dnsResolver({
    servers: [server.address],
    hostsFile: none,
    resolvConf: none,
    system: (name, family) => {
      system.push(`${name} ${family}`);
      return Promise.resolve([{ address: '192.0.2.1', family: 4 }]);
    },
    ...more,
  });
  return { resolve, system };
}

test('a host with both families: its IPv4 addresses, then its IPv6 ones; one family when asked for one', async () => {
  const server = await dnsServer(() => [V4, V6]);
  const { resolve } = resolverOn(server);
  expect(await resolve('feeds.example', 0)).toEqual([
    { address: V4, family: 4 },
    { address: V6, family: 6 },
  ]);
  expect(await resolve('only-v6.example', 6)).toEqual([{ address: V6, family: 6 }]);
  expect(server.asked).toEqual(['feeds.example A', 'feeds.example AAAA', 'only-v6.example AAAA']);
});

test('an IPv4 answer that comes after the IPv6 one is waited for', async () => {
  const server = await dnsServer((_name, type) => (type === 'A' ? { after: 150, answer: [V4] } : [V6]));
  expect(await resolverOn(server).resolve('feeds.example', 0)).toEqual([
    { address: V4, family: 4 },
    { address: V6, family: 6 },
  ]);
});

test('a name server that never answers AAAA does not hold up a host that has an IPv4 address', async () => {
  const server = await dnsServer((_name, type) => (type === 'A' ? [V4] : 'silent'));
  const { resolve } = resolverOn(server, { timeoutMs: 60_000, tries: 1 });
  // The test's own time (5 s) is far less than the silent query's: the IPv6 query had 50 ms, no more.
  expect(await resolve('feeds.example', 0)).toEqual([{ address: V4, family: 4 }]);
});

test('with ADDRCONFIG, only the families the machine has an address of are asked', async () => {
  const server = await dnsServer(() => [V4, V6]);
  const interfaces = () => ({
    lo: [{ address: '::1', family: 'IPv6', internal: true }],
    eth0: [
      { address: '192.168.1.5', family: 'IPv4', internal: false },
      { address: 'fe80::1', family: 'IPv6', internal: false },
    ],
  });
  const { resolve } = resolverOn(server, { interfaces: interfaces as never });
  expect(await resolve('feeds.example', 0, { hints: dns.ADDRCONFIG })).toEqual([{ address: V4, family: 4 }]);
  expect(server.asked).toEqual(['feeds.example A']);
});

test('the hosts file comes first: its addresses of the name and family, and the DNS is not asked', async () => {
  const server = await dnsServer(() => [V4]);
  const hostsFile = path.join(dir, 'hosts');
  writeFileSync(
    hostsFile,
    '# a comment\n10.1.2.3\tFeeds.Lan feeds # the NAS\nfd00::3 feeds.lan\nfe80::1%eth0 feeds.lan\n',
  );
  const { resolve } = resolverOn(server, { hostsFile });
  expect(await resolve('feeds.lan', 0)).toEqual([
    { address: '10.1.2.3', family: 4 },
    { address: 'fd00::3', family: 6 },
  ]);
  expect(await resolve('FEEDS.lan.', 6)).toEqual([{ address: 'fd00::3', family: 6 }]);
  // A change to the file is read.
  writeFileSync(hostsFile, '10.4.5.6 feeds.lan\n');
  expect(await resolve('feeds.lan', 0)).toEqual([{ address: '10.4.5.6', family: 4 }]);
  expect(server.asked).toEqual([]);
});

test('a name without a dot, or under .local, is asked of the system, not of the DNS', async () => {
  const server = await dnsServer(() => [V4]);
  const { resolve, system } = resolverOn(server);
  await resolve('nas', 0);
  await resolve('printer.local', 4);
  expect(system).toEqual(['nas 0', 'printer.local 4']);
  expect(server.asked).toEqual([]);
  // The real one: the system's hosts file knows localhost.
  const real = dnsResolver({ servers: [server.address], hostsFile: none });
  expect(await real('localhost', 4)).toContainEqual({ address: '127.0.0.1', family: 4 });
});

test('a name the DNS does not know fails with ENOTFOUND; with search domains, the system is asked', async () => {
  const server = await dnsServer(() => 'nxdomain');
  const plain = resolverOn(server);
  await expect(plain.resolve('dead-host.example', 0)).rejects.toMatchObject({ code: 'ENOTFOUND' });
  expect(plain.system).toEqual([]);
  const resolvConf = path.join(dir, 'resolv.conf');
  writeFileSync(resolvConf, 'nameserver 10.0.0.1\nsearch ns.svc.cluster.local svc.cluster.local\noptions ndots:5\n');
  const cluster = resolverOn(server, { resolvConf });
  expect(await cluster.resolve('ntfy.my-namespace', 0)).toEqual([{ address: '192.0.2.1', family: 4 }]);
  expect(cluster.system).toEqual(['ntfy.my-namespace 0']);
});

test('a DNS server that fails (SERVFAIL) fails the lookup; the system is not asked, search domains or not', async () => {
  const server = await dnsServer(() => 'servfail');
  const resolvConf = path.join(dir, 'resolv-search.conf');
  writeFileSync(resolvConf, 'search example.net\n');
  const { resolve, system } = resolverOn(server, { resolvConf });
  await expect(resolve('feeds.example', 0)).rejects.toMatchObject({ code: 'ESERVFAIL' });
  expect(system).toEqual([]);
});

test("systemd-resolved's `search .` names no search domain", async () => {
  const server = await dnsServer(() => 'nxdomain');
  const resolvConf = path.join(dir, 'resolv-dot.conf');
  writeFileSync(resolvConf, 'nameserver 127.0.0.53\noptions edns0 trust-ad\nsearch .\n');
  const { resolve, system } = resolverOn(server, { resolvConf });
  await expect(resolve('dead-host.example', 0)).rejects.toMatchObject({ code: 'ENOTFOUND' });
  expect(system).toEqual([]);
});

test('a name server that never answers fails the lookup with ETIMEOUT, and the system is not asked', async () => {
  const server = await dnsServer(() => 'silent');
  const { resolve, system } = resolverOn(server, { timeoutMs: 200, tries: 2 });
  await expect(resolve('feeds.example', 0)).rejects.toMatchObject({ code: 'ETIMEOUT' });
  expect(server.asked.filter((q) => q === 'feeds.example A').length).toBeGreaterThanOrEqual(2);
  expect(system).toEqual([]);
});

test('a lookup whose signal aborts stops asking at once', async () => {
  const server = await dnsServer(() => 'silent');
  const { resolve } = resolverOn(server, { timeoutMs: 60_000, tries: 1 });
  const abort = new AbortController();
  const lookup = resolve('feeds.example', 0, { signal: abort.signal });
  setTimeout(() => abort.abort(), 50);
  // Within the test's 5 s, not the query's 60 s.
  await expect(lookup).rejects.toMatchObject({ code: 'ECANCELLED' });
});

test('a lookup whose signal aborted before it began asks nothing', async () => {
  const server = await dnsServer(() => 'silent');
  const { resolve, system } = resolverOn(server, { timeoutMs: 60_000, tries: 1 });
  await expect(resolve('feeds.example', 0, { signal: AbortSignal.abort() })).rejects.toMatchObject({
    name: 'AbortError',
  });
  await expect(resolve('nas', 0, { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
  expect([...server.asked, ...system]).toEqual([]);
});

test('an IP address is itself, with no question asked', async () => {
  const server = await dnsServer(() => [V4]);
  const { resolve, system } = resolverOn(server);
  expect(await resolve('192.0.2.7', 0)).toEqual([{ address: '192.0.2.7', family: 4 }]);
  expect([...server.asked, ...system]).toEqual([]);
});

test("lookups waiting on a silent name server leave libuv's thread pool free (compression, hashing, files)", async () => {
  const server = await dnsServer(() => 'silent');
  const { resolve } = resolverOn(server, { timeoutMs: 1500, tries: 1 });
  const order: string[] = [];
  // More lookups than the pool has threads (4): with getaddrinfo each would hold one until it gave up.
  const lookups = Array.from({ length: 8 }, (_, i) =>
    resolve(`dead-${i}.example`, 0).catch((err: NodeJS.ErrnoException) => void order.push(`lookup ${err.code}`)),
  );
  await new Promise((r) => setTimeout(r, 100));
  await promisify(zlib.gzip)(Buffer.alloc(1 << 20, 'castsync'));
  order.push('gzip');
  await Promise.all(lookups);
  expect(order).toEqual(['gzip', ...Array<string>(8).fill('lookup ETIMEOUT')]);
});
