// The index that tells whether an item's artwork URL is known (src/feeds/artwork-repo.ts), built
// CONCURRENTLY: feed_items holds up to 1,000 items a feed, and a plain build took 5.6 s at 3 million items.
// The migrations run in one transaction, so every lock taken before such a build was held through it: the
// running apps' writes (each takes its user's row) and reads of users waited that long. Outside the
// transaction, the migrations before it commit first, and the build holds no lock that stops a write.
// A build that failed part way leaves an invalid index, dropped before the next try.
/** @param {import('node-pg-migrate').MigrationBuilder} pgm */
exports.up = (pgm) => {
  pgm.noTransaction();
  pgm.sql('DROP INDEX CONCURRENTLY IF EXISTS feed_items_artwork_url');
  pgm.sql('CREATE INDEX CONCURRENTLY feed_items_artwork_url ON feed_items USING hash (artwork_url)');
};

/** @param {import('node-pg-migrate').MigrationBuilder} pgm */
exports.down = (pgm) => {
  pgm.noTransaction();
  pgm.sql('DROP INDEX CONCURRENTLY IF EXISTS feed_items_artwork_url');
};
