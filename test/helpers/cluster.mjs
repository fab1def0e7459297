// A PostgreSQL that a test can stop and start, playing an external database server:
//   node test/helpers/cluster.mjs DATA_DIR PORT   -> prints "ready <url>"; SIGTERM stops it.
import embedded from '../../dist/db/embedded.js';
import logging from '../../dist/logger.js';

const [dataDir, port] = process.argv.slice(2);
const db = await embedded.openEmbedded({
  dataDir,
  port: Number(port),
  attach: false,
  logger: logging.createLogger('warn'),
  settings: { fsync: 'off' },
});
process.stdout.write(`ready ${db.url}\n`);
process.on('SIGTERM', async () => {
  await db.stop();
  process.exit(0);
});
