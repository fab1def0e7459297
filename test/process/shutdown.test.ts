import net from 'node:net';
import { freshDatabase } from '../helpers/db';
import { basicAuth, cli, startServer, underLoad, type ServerProcess } from '../helpers/process';

let database: Awaited<ReturnType<typeof freshDatabase>>;
let env: Record<string, string>;
const auth = basicAuth('sam', 'sam-password');

beforeAll(async () => {
  database = await freshDatabase();
  env = { DATABASE_URL: database.url };
  expect(cli(['user', 'add', 'sam', '--password-stdin'], env, 'sam-password\n').status).toBe(0);
});
afterAll(() => database.drop());

/** A request that the server has accepted and is still reading (its body never finishes). */
function stuckRequest(origin: string): Promise<net.Socket> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname, () => {
      socket.write(
        `POST /v1/subscriptions HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"subs`,
      );
      setTimeout(() => resolve(socket), 200);
    });
    socket.on('error', () => undefined);
  });
}

/**
 * A TCP proxy to the database that can stop forwarding, as a hung database server or network would: once
 * frozen, nothing passes and no connection is ever closed from its side.
 */
async function freezableProxy(target: URL) {
  const sockets = new Set<net.Socket>();
  let frozen = false;
  const server = net.createServer({ allowHalfOpen: true }, (client) => {
    const upstream = net.connect({ port: Number(target.port), host: target.hostname, allowHalfOpen: true });
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      sockets.add(from);
      from.on('data', (d) => frozen || to.write(d));
      from.on('end', () => frozen || to.end());
      from.on('error', () => frozen || to.destroy());
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    freeze: () => (frozen = true),
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

describe('graceful shutdown', () => {
  test('SIGTERM under load: every accepted request completes, none is reset; exit 0 within 10 s', async () => {
    const server: ServerProcess = await startServer(env);
    let exit!: Awaited<ServerProcess['exited']>;
    let t0 = 0;
    const outcomes = await underLoad(server.origin, auth, 'drain', async () => {
      t0 = Date.now();
      server.kill('SIGTERM');
      exit = await server.exited;
    });
    process.stderr.write(
      `reliability: SIGTERM under load: completed ${outcomes.ok}, refused after close ${outcomes.refused}, ` +
        `failed ${outcomes.failed.length}, exit ${exit.code} after ${exit.at - t0} ms\n`,
    );
    expect(outcomes.failed).toEqual([]);
    expect(outcomes.ok).toBeGreaterThan(50);
    expect(exit.code).toBe(0);
    // Exit 0 means the server finished before its own SHUTDOWN_TIMEOUT (10 s); the margin is for a busy machine.
    expect(exit.at - t0).toBeLessThan(10_000 + 3000);
  });

  test('a client that never finishes its request cannot hold the shutdown: its connection is cut, exit 0', async () => {
    const server = await startServer(env);
    const socket = await stuckRequest(server.origin);
    const t0 = Date.now();
    server.kill('SIGTERM');
    const exit = await server.exited;
    socket.destroy();
    expect(exit.code).toBe(0);
    expect(server.log()).toMatch(/requests still open at the drain deadline: closing their connections/);
    expect(server.log()).not.toMatch(/did not finish within SHUTDOWN_TIMEOUT/);
    // The server's own deadline is SHUTDOWN_TIMEOUT (10 s); the margin is for a busy test machine.
    expect(exit.at - t0).toBeLessThan(10_000 + 3000);
  });

  test('a repeated SIGTERM or SIGINT does not cut the drain short; SIGQUIT exits at once', async () => {
    // A long drain, so that "at once" cannot be confused with the end of the drain.
    const server = await startServer({ ...env, SHUTDOWN_TIMEOUT: '60' });
    const socket = await stuckRequest(server.origin);
    let exited = false;
    void server.exited.then(() => (exited = true));
    server.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    server.kill('SIGTERM');
    server.kill('SIGINT');
    await new Promise((r) => setTimeout(r, 1500));
    expect(exited).toBe(false);
    expect(server.log()).not.toMatch(/exiting at once/);
    const t0 = Date.now();
    server.kill('SIGQUIT');
    const exit = await server.exited;
    socket.destroy();
    expect(exit.code).toBe(1);
    expect(exit.at - t0).toBeLessThan(10_000);
    expect(server.log()).toMatch(/exiting at once, without draining/);
  });

  test('a database that stops answering cannot hold the shutdown past SHUTDOWN_TIMEOUT: exit 1, said so', async () => {
    const proxy = await freezableProxy(new URL(database.url));
    try {
      const url = new URL(database.url);
      url.host = `127.0.0.1:${proxy.port}`;
      const server = await startServer({ DATABASE_URL: url.href, SHUTDOWN_TIMEOUT: '4' });
      proxy.freeze();
      const t0 = Date.now();
      server.kill('SIGTERM');
      const exit = await server.exited;
      expect(exit.code).toBe(1);
      expect(server.log()).toMatch(/shutdown did not finish within SHUTDOWN_TIMEOUT: exiting/);
      expect(exit.at - t0).toBeGreaterThanOrEqual(4000 - 100);
      expect(exit.at - t0).toBeLessThan(4000 + 5000);
    } finally {
      proxy.close();
    }
  });

  test('/readyz answers 503 while the server drains', async () => {
    const server = await startServer({ ...env, SHUTDOWN_TIMEOUT: '5' });
    const socket = await stuckRequest(server.origin);
    // A keep-alive connection opened before the signal can still ask.
    const { hostname, port } = new URL(server.origin);
    const probe = net.connect(Number(port), hostname);
    await new Promise((r) => probe.once('connect', r));
    server.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    const answer = await new Promise<string>((resolve) => {
      let data = '';
      probe.on('data', (d) => {
        data += d;
        if (data.includes('\r\n\r\n') && data.includes('}')) resolve(data);
      });
      probe.write('GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n');
    });
    expect(answer).toMatch(/^HTTP\/1\.1 503/);
    expect(answer).toMatch(/Connection: close/i);
    probe.destroy();
    socket.destroy();
    await server.exited;
  });
});
