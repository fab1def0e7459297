import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { freshDatabase } from '../helpers/db';
import { freePort, onFreePort, startCluster, startServer, stopServer } from '../helpers/process';

// Tests run beside each other, each starting servers on ports that were free when picked. A server of
// another test that takes the port first must not be mistaken for the one started (its /healthz answers
// too, and then every request of the test goes to a server that does not know its people).

let database: Awaited<ReturnType<typeof freshDatabase>>;
let squatter: http.Server;
let squatted: number;

beforeAll(async () => {
  database = await freshDatabase();
  squatter = http.createServer((_req, res) => res.end('{"status":"ok"}'));
  await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
  squatted = (squatter.address() as net.AddressInfo).port;
});
afterAll(async () => {
  await new Promise((r) => squatter.close(r));
  await database.drop();
});

test('a port another process answers on is not taken for the server started', async () => {
  expect((await fetch(`http://127.0.0.1:${squatted}/healthz`)).status).toBe(200);
  await expect(startServer({ DATABASE_URL: database.url }, 30_000, { port: squatted })).rejects.toThrow(
    /another process's/,
  );
});

test('a picked port taken before the server listens: the start is tried again on another port', async () => {
  const picked: number[] = [];
  const server = await startServer({ DATABASE_URL: database.url }, 60_000, {
    pickPort: async () => {
      picked.push(picked.length === 0 ? squatted : await freePort());
      return picked.at(-1)!;
    },
  });
  try {
    expect(picked).toHaveLength(2);
    expect(server.origin).toBe(`http://127.0.0.1:${picked[1]}`);
    expect(((await (await fetch(`${server.origin}/healthz`)).json()) as { version: string }).version).toEqual(
      expect.any(String),
    );
  } finally {
    await stopServer(server);
  }
});

test('a helper whose port was taken (a PostgreSQL of its own) is started again on another port', async () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'castsync-start-helper-'));
  const picked: number[] = [];
  const cluster = await onFreePort(
    (port) => startCluster(dataDir, port),
    async () => {
      picked.push(picked.length === 0 ? squatted : await freePort());
      return picked.at(-1)!;
    },
  );
  try {
    expect(picked).toHaveLength(2);
    expect(cluster.port).toBe(picked[1]);
    const client = new Client({ connectionString: cluster.url });
    await client.connect();
    expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await client.end();
  } finally {
    await cluster.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
