import dgram from 'node:dgram';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { dnsResolver } from '../../src/feeds/resolve';
import { startDnsServer, type DnsAnswer, type DnsServer } from '../helpers/dns-server';
import { tempDirForFile } from '../helpers/tmp';

const dir = tempDirForFile('castsync-resolve-');

// The fetcher's resolver reads the hosts file and asks DNS servers itself, on the event loop; the system only
// about names the DNS cannot know. A silent name server holds no thread and fails the lookup in its time.

const servers: DnsServer[] = [];
afterAll(() => Promise.all(servers.map((s) => s.close())));
async function dns(answer: (name: string, type: 'A' | 'AAAA') => DnsAnswer) {
  const server = await startDnsServer(answer);
  servers.push(server);
  return server;
}

test('a host with both families: its IPv4 addresses, then its IPv6 ones; one family when asked for one', async () => {
  const server = await dns(() => ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c']);
  const resolve = dnsResolver({ servers: [server.address] });
  expect(await resolve('feeds.example', 0)).toEqual([
    { address: '93.184.215.14', family: 4 },
    { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
  ]);
  expect(await resolve('only-v6.example', 6)).toEqual([
    { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
  ]);
  expect(server.asked).toEqual(['feeds.example A', 'feeds.example AAAA', 'only-v6.example AAAA']);
});

test('a name server that never answers AAAA does not hold up a host that has an IPv4 address', async () => {
  const server = await dns((_name, type) => (type === 'A' ? ['93.184.215.14'] : 'silent'));
  const resolve = dnsResolver({ servers: [server.address], timeoutMs: 30_000, tries: 1 });
  const t0 = Date.now();
  expect(await resolve('feeds.example', 0)).toEqual([{ address: '93.184.215.14', family: 4 }]);
  // Well before the silent query's 30 s: the other family had its resolution delay (50 ms), no more.
  expect(Date.now() - t0).toBeLessThan(15_000);
});

test('the hosts file comes first: its addresses of the name and family, and the DNS is not asked', async () => {
  const server = await dns(() => ['93.184.215.14']);
  const hostsFile = path.join(dir, 'hosts');
  writeFileSync(hostsFile, '# a comment\n10.1.2.3\tFeeds.Lan feeds # the NAS\nfd00::3 feeds.lan\n10.9.9.9 other.lan\n');
  const resolve = dnsResolver({ servers: [server.address], hostsFile });
  expect(await resolve('feeds.lan', 0)).toEqual([
    { address: '10.1.2.3', family: 4 },
    { address: 'fd00::3', family: 6 },
  ]);
  expect(await resolve('FEEDS.lan.', 6)).toEqual([{ address: 'fd00::3', family: 6 }]);
  expect(server.asked).toEqual([]);
});

test('a name the DNS does not know fails with ENOTFOUND; one without a dot is then asked of the system', async () => {
  const server = await dns(() => 'nxdomain');
  const resolve = dnsResolver({ servers: [server.address], hostsFile: path.join(dir, 'none') });
  await expect(resolve('dead-host.example', 0)).rejects.toMatchObject({ code: 'ENOTFOUND' });
  // The system's own hosts file knows localhost (search domains would be tried the same way).
  expect(await resolve('localhost', 4)).toContainEqual({ address: '127.0.0.1', family: 4 });
  expect(server.asked).toEqual(['dead-host.example A', 'dead-host.example AAAA', 'localhost A']);
});

test('with no DNS server listening, a name without a dot is asked of the system', async () => {
  const closed = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => closed.bind(0, '127.0.0.1', resolve));
  const port = closed.address().port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const resolve = dnsResolver({ servers: [`127.0.0.1:${port}`], hostsFile: path.join(dir, 'none') });
  expect(await resolve('localhost', 4)).toContainEqual({ address: '127.0.0.1', family: 4 });
});

test('a name server that never answers fails the lookup with ETIMEOUT, and the system is not asked', async () => {
  const server = await dns(() => 'silent');
  // localhost: the system would have an answer at once.
  await expect(
    dnsResolver({ servers: [server.address], timeoutMs: 200, tries: 2, hostsFile: path.join(dir, 'none') })(
      'localhost',
      0,
    ),
  ).rejects.toMatchObject({ code: 'ETIMEOUT' });
  expect(server.asked.filter((q) => q === 'localhost A').length).toBeGreaterThanOrEqual(2);
});

test("lookups waiting on a silent name server leave libuv's thread pool free (compression, hashing, files)", async () => {
  const server = await dns(() => 'silent');
  const resolve = dnsResolver({ servers: [server.address], timeoutMs: 3000, tries: 1 });
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
