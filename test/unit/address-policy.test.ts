import { checkedLookup, DEFAULT_POLICY, literalAddress, refusal } from '../../src/feeds/address-policy';
import dns from 'node:dns';

describe('the fetcher refuses every address that is not public unicast, by default', () => {
  test.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.254', 'private'],
    ['192.168.0.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['100.127.255.254', 'carrierGradeNat'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['fe80::1', 'linkLocal'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['64:ff9b::7f00:1', 'rfc6052'],
    ['2002:7f00:1::1', '6to4'],
  ])('%s is refused (%s)', (address, range) => {
    expect(refusal(address, DEFAULT_POLICY)).toMatch(new RegExp(`^${range} address`));
  });

  test.each(['93.184.215.14', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '::ffff:93.184.215.14'])(
    '%s is allowed',
    (address) => {
      expect(refusal(address, DEFAULT_POLICY)).toBeUndefined();
    },
  );

  test.each([
    ['http://2130706433/feed', '127.0.0.1'],
    ['http://0177.0.0.1/feed', '127.0.0.1'],
    ['http://0x7f.1/feed', '127.0.0.1'],
    ['http://127.1/feed', '127.0.0.1'],
    ['http://0/feed', '0.0.0.0'],
    ['http://[::ffff:127.0.0.1]/feed', '::ffff:7f00:1'],
    ['http://[::1]:8080/feed', '::1'],
  ])('the host spelling %s is read as the address %s, and refused', (url, address) => {
    const literal = literalAddress(new URL(url).hostname);
    expect(literal).toBe(address);
    expect(refusal(literal!, DEFAULT_POLICY)).toBeDefined();
  });

  test('a host name is not an address literal (it goes through the checked lookup)', () => {
    expect(literalAddress('localhost')).toBeUndefined();
    expect(literalAddress('feeds.example.org')).toBeUndefined();
  });
});

describe('what an operator allows', () => {
  test('FEED_FETCH_ALLOW_PRIVATE allows every non-public address, never multicast or unspecified', () => {
    const policy = { allowPrivate: true, allowCidrs: [] };
    for (const a of ['127.0.0.1', '10.0.0.1', '192.168.1.10', 'fd00::1', '::ffff:192.168.1.1'])
      expect(refusal(a, policy)).toBeUndefined();
    for (const a of ['0.0.0.0', '224.0.0.1', '::']) expect(refusal(a, policy)).toBeDefined();
  });

  test('an allowlist of CIDR ranges allows those and nothing else', () => {
    const policy = { allowPrivate: false, allowCidrs: ['192.168.1.0/24', 'fd00::/8'] };
    expect(refusal('192.168.1.20', policy)).toBeUndefined();
    expect(refusal('::ffff:192.168.1.20', policy)).toBeUndefined();
    expect(refusal('fd00::5', policy)).toBeUndefined();
    expect(refusal('192.168.2.20', policy)).toMatch(/^private/);
    expect(refusal('127.0.0.1', policy)).toMatch(/^loopback/);
  });
});

describe('the checked lookup', () => {
  const resolver = (answers: dns.LookupAddress[]) => () => Promise.resolve(answers);

  const run = (answers: dns.LookupAddress[], all: boolean) =>
    new Promise<{ err: Error | null; address: unknown; family?: number }>((resolve) =>
      checkedLookup(DEFAULT_POLICY, { resolve: resolver(answers) })('feeds.example', { all }, (err, address, family) =>
        resolve({ err, address, family }),
      ),
    );

  test('hands the socket only the allowed addresses of a mixed answer', async () => {
    const mixed = [
      { address: '10.0.0.5', family: 4 },
      { address: '93.184.215.14', family: 4 },
    ];
    expect(await run(mixed, false)).toEqual({ err: null, address: '93.184.215.14', family: 4 });
    expect(await run(mixed, true)).toEqual({ err: null, address: [mixed[1]], family: undefined });
  });

  test("passes on what net asks for: the family (a number or 'IPv6'), the hints, and the request's signal", async () => {
    const asked: unknown[] = [];
    const signal = new AbortController().signal;
    const resolve = (name: string, family: number, options?: { hints?: number; signal?: AbortSignal }) => {
      asked.push({ name, family, hints: options?.hints, signal: options?.signal === signal });
      return Promise.resolve([{ address: '93.184.215.14', family: 4 }]);
    };
    const lookup = checkedLookup(DEFAULT_POLICY, { signal, resolve });
    const call = (options: dns.LookupOptions) => new Promise((done) => lookup('feeds.example', options, done));
    await call({ family: 'IPv6' });
    await call({ family: 4, hints: dns.ADDRCONFIG, all: true });
    await call({});
    expect(asked).toEqual([
      { name: 'feeds.example', family: 6, hints: 0, signal: true },
      { name: 'feeds.example', family: 4, hints: dns.ADDRCONFIG, signal: true },
      { name: 'feeds.example', family: 0, hints: 0, signal: true },
    ]);
  });

  test('fails with a refusal when every address is refused (a name that points inside)', async () => {
    const r = await run(
      [
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ],
      false,
    );
    expect(r.err?.message).toBe(
      'feeds.example resolves to a refused address (loopback address 127.0.0.1, loopback address ::1)',
    );
  });
});
