// The floor: the least code that serves the same GET and POST on the same stack (Express 5 + pg), with no
// validation, no logging and tokens in a Map; and a user's episode actions as JSON. castsync is measured against it, in the same run.
//   node bench/floor.mjs <port> <DATABASE_URL>
import express from 'express';
import pg from 'pg';

const [port, databaseUrl] = process.argv.slice(2);
const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
const tokens = new Map(
  (await pool.query('select token, user_id from floor.tokens')).rows.map((r) => [r.token, r.user_id]),
);

const app = express();
app.use(express.json({ limit: '1mb' }));
const user = (req) => tokens.get((req.headers.authorization ?? '').slice(7));

app.get('/v1/subscriptions', async (req, res) => {
  const userId = user(req);
  if (!userId) return res.status(401).json({ code: '401', message: 'User not authorized' });
  const page = Number(req.query.page ?? 1);
  const perPage = Number(req.query.per_page ?? 50);
  const [rows, count] = await Promise.all([
    pool.query(
      'select feed_url, guid, is_subscribed, changed from floor.subs where user_id = $1 order by id limit $2 offset $3',
      [userId, perPage, (page - 1) * perPage],
    ),
    pool.query('select count(*)::int as n from floor.subs where user_id = $1', [userId]),
  ]);
  res.json({
    total: count.rows[0].n,
    page,
    per_page: perPage,
    subscriptions: rows.rows.map((r) => ({
      feed_url: r.feed_url,
      guid: r.guid,
      is_subscribed: r.is_subscribed,
      subscription_changed: r.changed.toISOString(),
    })),
  });
});

app.post('/v1/subscriptions', async (req, res) => {
  const userId = user(req);
  if (!userId) return res.status(401).json({ code: '401', message: 'User not authorized' });
  const urls = req.body.subscriptions.map((s) => s.feed_url);
  const r = await pool.query(
    `insert into floor.subs (user_id, feed_url, guid, is_subscribed, changed)
     select $1, u, gen_random_uuid(), true, now() from unnest($2::text[]) u
     on conflict (user_id, feed_url) do update set is_subscribed = true, changed = now()
     returning feed_url, guid, is_subscribed, changed`,
    [userId, urls],
  );
  res.json({
    success: r.rows.map((x) => ({
      feed_url: x.feed_url,
      guid: x.guid,
      is_subscribed: true,
      subscription_changed: x.changed.toISOString(),
    })),
    failure: [],
  });
});

// A user's episode actions since a time, as JSON: the rows as pg gives them (no auth: the user's id in the path).
app.get('/floor/episodes/:user', async (req, res) => {
  const r = await pool.query(
    `select podcast_url as podcast, episode_url as episode, episode_guid as guid, action, at as timestamp,
            device_id as device, started, position, total
       from episode_actions where user_id = $1 and changed >= $2 order by changed, id`,
    [Number(req.params.user), new Date(Number(req.query.since ?? 0) * 1000)],
  );
  res.json({ actions: r.rows, timestamp: Math.floor(Date.now() / 1000) });
});

app.listen(Number(port), '127.0.0.1', () => console.log('floor ready'));
