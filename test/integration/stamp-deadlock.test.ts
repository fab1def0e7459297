import pg from 'pg';
import { takeChangeStamp } from '../../src/db/change-stamp';
import { withTransaction } from '../../src/db/pool';
import { lookedAt } from '../../src/feeds/repo';
import { insertIfAllNew } from '../../src/subscriptions/repo';
import { checkFeed, isItem } from '../../src/subscriptions/subscribe';
import { freshDatabase, testPool } from '../helpers/db';

// A user's writers take the change stamp on the user's row (src/db/change-stamp.ts), while rows inserted
// for the user elsewhere check their foreign key with a FOR KEY SHARE lock on the same row: the feed
// fetcher's note of its first look at a user (feed_discovery), a device, a token. Writers that lock the row
// FOR NO KEY UPDATE and then update it deadlocked with the next writer queued for it whenever such a check
// came in between (PostgreSQL ended one of them, and its request answered 500).

let db: Awaited<ReturnType<typeof freshDatabase>>;
let pool: pg.Pool;
beforeAll(async () => {
  db = await freshDatabase();
  // PostgreSQL looks for a deadlock after this long (1 s by default): the rounds stay short.
  pool = testPool(db.url, { max: 16, options: '-c deadlock_timeout=50ms' });
});
afterAll(async () => {
  await pool.end();
  await db.drop();
});

test('writers of one user and the foreign-key checks of rows inserted for them do not deadlock', async () => {
  let seq = 0;
  const newFeed = () => {
    const item = checkFeed({ url: `https://stamp.example/${seq++}.xml` });
    if (!isItem(item)) throw new Error('not a feed');
    return { guid: item.guid, feedUrl: item.feedUrl, urlHash: item.hash, guidChanged: false };
  };
  for (let round = 0; round < 20; round++) {
    const r = await pool.query<{ id: number }>(
      "INSERT INTO users (username, password_hash) VALUES ($1, 'x') RETURNING id",
      [`stamp${round}`],
    );
    const userId = r.rows[0]!.id;
    // The fetcher's first look at the user inserts its note, whose foreign key locks the user's row FOR KEY
    // SHARE until its transaction ends; meanwhile POSTs of new feeds (one statement each) and transactions
    // that take a stamp, as the general way of every door does, write for the user.
    const look = await pool.connect();
    try {
      await look.query('BEGIN');
      await lookedAt(look, userId, new Date(), '1');
      const writers = Array.from({ length: 8 }, (_, k) =>
        k % 4 === 3
          ? withTransaction(pool, (tx) => takeChangeStamp(tx, userId))
          : insertIfAllNew(pool, userId, [newFeed()]),
      );
      await new Promise((resolve) => setTimeout(resolve, 30));
      await look.query('COMMIT');
      const failed = (await Promise.allSettled(writers)).filter((x) => x.status === 'rejected');
      expect(failed.map((x) => String((x as PromiseRejectedResult).reason))).toEqual([]);
    } finally {
      look.release();
    }
  }
});
