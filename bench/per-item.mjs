// The sync draft's cost per item against /v1's (bench/per-item-cost.mjs) on a server of its own, the same
// user for all, as `npm start` runs it with the fetcher off. From the project directory:
// `node bench/per-item.mjs` (N: requests of each kind, 240; SHARED_DIR: where ../shared is).
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { serverPid } from './lib.mjs';
import { perItemCost } from './per-item-cost.mjs';

const shared = resolve(process.env.SHARED_DIR ?? join(process.cwd(), '..', 'shared'));
const { startServer, createUser } = await import(pathToFileURL(join(shared, 'conformance', 'harness.mjs')).href);

const server = await startServer({ extraEnv: { LOG_LEVEL: 'warn', FEED_FETCH: 'false' } });
try {
  const user = createUser(server, 'cost');
  const auth = 'Basic ' + Buffer.from(`${user.name}:${user.password}`).toString('base64');
  const watch = serverPid(server.pid, 'dist/server.js');
  console.log(JSON.stringify(await perItemCost(server.origin, auth, { n: +(process.env.N ?? 240), watch })));
} finally {
  await server.stop();
}
