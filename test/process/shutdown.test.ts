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
    expect(exit.at - t0).toBeLessThan(10_000);
  });

  test('a client that never finishes its request cannot hold the shutdown past 10 s', async () => {
    const server = await startServer(env);
    const socket = await stuckRequest(server.origin);
    const t0 = Date.now();
    server.kill('SIGTERM');
    const exit = await server.exited;
    socket.destroy();
    expect(exit.code).toBe(0);
    expect(exit.at - t0).toBeLessThan(10_000);
  });

  test('a repeated SIGTERM or SIGINT does not cut the drain short; SIGQUIT exits at once', async () => {
    const server = await startServer({ ...env, SHUTDOWN_TIMEOUT: '4' });
    const socket = await stuckRequest(server.origin);
    server.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    server.kill('SIGTERM');
    server.kill('SIGINT');
    await new Promise((r) => setTimeout(r, 700));
    expect(server.log()).not.toMatch(/exiting at once/);
    const t0 = Date.now();
    server.kill('SIGQUIT');
    const exit = await server.exited;
    socket.destroy();
    expect(exit.code).toBe(1);
    expect(exit.at - t0).toBeLessThan(1000);
    expect(server.log()).toMatch(/exiting at once, without draining/);
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
