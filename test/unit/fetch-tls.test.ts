import net from 'node:net';
import tls from 'node:tls';
import { send } from '../../src/feeds/fetch';

// The fetcher's https requests share one set of TLS settings: making them costs about 0.16 ms of CPU, which
// each request paid again (with the feed's own handshake on top) while it had no agent.

/** A loopback port nothing listens on: a request to it is refused at once. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test('https requests make their TLS settings once, not once each', async () => {
  const port = await closedPort();
  const made = jest.spyOn(tls, 'createSecureContext');
  try {
    for (let i = 0; i < 4; i++) {
      const url = new URL(`https://127.0.0.1:${port}/feed-${i}.xml`);
      await expect(
        send(url, {}, { allowPrivate: true, allowCidrs: [] }, AbortSignal.timeout(5000)),
      ).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    }
    expect(made.mock.calls.length).toBeLessThanOrEqual(1);
  } finally {
    made.mockRestore();
  }
});
