// The scale bench's data set, written with set-based SQL into the tables the app's writes touch, as those
// writes would have left them (bench/README.md, "Scale"): users, devices and app passwords, when each was
// last seen; subscription records stamped by the write that made them, with the guid a feed declared
// adopted as the fetcher adopts it (the earlier guid, the feed change); episode actions in upload batches
// of 30 under one change stamp, each linked to the user's record and with its JSON written; each episode's
// latest action of each type; the user's last change, record count and the fetcher's look; feeds, and the
// popular feeds' items stored by the fetcher's own code from the feed the loopback server serves.
import pg from 'pg';
import { require, URL_HASH } from '../lib.mjs';
import {
  bigUsers,
  declaredGuid,
  declaresGuid,
  feedCount,
  feedUrl,
  feedXml,
  FULL,
  HISTORY,
  PROBE,
  PROBE_FEEDS,
  PROBES,
  popularCount,
} from './shape.mjs';

const { checkFeedUrl, podcastGuid, urlHash } = require('./dist/subscriptions/urls.js');
const { parseFeed } = require('./dist/feeds/parse.js');
const feedsRepo = require('./dist/feeds/repo.js');
/** The episode-action JSON as the intake writes it; the bench also checks it by reading it back. */
const { ACTION_JSON } = require('./dist/episodes/repo.js');

const G = 'scale_gen';
const DEVICES = `ARRAY['phone', 'laptop', 'tablet', 'desktop']`;

/** A uniform number in [0, 1) from a key, an index and a salt: the same every run and in every data set. */
const U = `CREATE FUNCTION ${G}.u(a bigint, b bigint, salt int) RETURNS float8 LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT (hashint8extended($1 * 1000003 + $2, $3) & 2147483647)::float8 / 2147483648.0 $$`;

/** Who the users are: the measured ones (always), and at SCALE > 0 the long tail, the active and the idle. */
function specsSql(scale) {
  const probes = `SELECT k, 'probe' || k, 'probe', ${PROBE.subs}, ${PROBE.actions},
         t0 - interval '730 days' + k * interval '1 hour', t0 - interval '1 hour' - k * interval '1 minute',
         ${PROBE.devices}, ${PROBE_FEEDS}
    FROM generate_series(0, ${PROBES - 1}) k
  UNION ALL
  SELECT ${PROBES}, 'history', 'history', ${HISTORY.subs}, ${HISTORY.actions}, t0 - interval '6 years',
         t0 - interval '2 hours', ${HISTORY.devices}, ${PROBE_FEEDS}`;
  if (scale === 0) return [probes];
  const big = bigUsers(scale);
  const feeds = feedCount(scale);
  const active = Math.max(0, Math.round(FULL.active * scale) - PROBES - 1 - big.count);
  const idle = Math.max(0, Math.round(FULL.users * scale) - Math.round(FULL.active * scale));
  const others = `
  UNION ALL
  SELECT 100 + i, 'big' || i, 'big', 200, ${big.actions}, t0 - interval '8 years',
         t0 - interval '3 hours' - i * interval '1 minute', 4, ${feeds}
    FROM generate_series(0, ${big.count - 1}) i
  UNION ALL
  SELECT key, 'user' || key, kind, least(300, 5 + floor(-25 * ln(1 - ${G}.u(key, 0, 11))))::int, 0,
         greatest(timestamptz '2008-06-01', e - CASE kind WHEN 'active' THEN (1 + 7 * ${G}.u(key, 0, 13)) * interval '365 days'
                                                ELSE ${G}.u(key, 0, 13) * interval '5 years' END),
         e, 1 + floor(${G}.u(key, 0, 14) * 3)::int, ${feeds}
    FROM (SELECT 1000 + i AS key, CASE WHEN i < ${active} THEN 'active' ELSE 'idle' END AS kind FROM generate_series(0, ${active + idle - 1}) i) k
   CROSS JOIN LATERAL (SELECT CASE kind WHEN 'active' THEN t0 - interval '1 hour' - ${G}.u(key, 0, 12) * interval '30 days'
                       ELSE timestamptz '2012-01-01' + ${G}.u(key, 0, 12) * (timestamptz '2023-12-31' - timestamptz '2012-01-01') END AS e) e`;
  // The long tail's actions: a log-normal weight per user (the active ones four times as busy), shared out.
  const rest = Math.round(FULL.actions * scale) - PROBES * PROBE.actions - HISTORY.actions - big.count * big.actions;
  const weights = `WITH w AS (
      SELECT key, exp(1.5 * sqrt(-2 * ln(1 - ${G}.u(key, 1, 7))) * cos(2 * pi() * ${G}.u(key, 2, 7)))
                  * CASE kind WHEN 'active' THEN 4 ELSE 1 END AS w
        FROM ${G}.specs WHERE kind IN ('active', 'idle'))
    UPDATE ${G}.specs s SET n_actions = least(150000, round(${Math.max(0, rest)} * w.w / (SELECT sum(w) FROM w)))::int
      FROM w WHERE s.key = w.key`;
  // A history needs room: two minutes an action at least.
  const room = `UPDATE ${G}.specs SET start_at = least(start_at, end_at - n_actions * interval '2 minutes')`;
  return [probes + others, weights, room];
}

/** Episode actions of every user whose `at` falls in [$1, $2), in the order they were stored. */
const ACTIONS_IN = `INSERT INTO episode_actions (user_id, podcast_url, podcast_hash, subscription_id, episode_url, episode_hash,
                             episode_guid, action, at, started, position, total, device_id, changed, json)
  SELECT x.user_id, x.podcast_url, x.podcast_hash, x.sub_id, x.episode_url, ${URL_HASH('x.episode_url')}, x.guid,
         x.action, x.at, x.started, x.position, x.total, x.device, x.changed, ${ACTION_JSON('x')}
    FROM (
      SELECT s.user_id, f.url AS podcast_url, f.url_hash AS podcast_hash, b.sub_id,
             'https://media.example/' || f.rank || '/episode-' || ep.k || '.mp3' AS episode_url,
             f.rank || '-episode-' || ep.k AS guid, a.action, t.at,
             CASE WHEN a.action = 'play' THEN CASE WHEN a.step = 1 THEN 0 ELSE ep.part END END AS started,
             CASE WHEN a.action = 'play' THEN CASE WHEN a.step = 1 THEN ep.part ELSE ep.total END END AS position,
             CASE WHEN a.action = 'play' THEN ep.total END AS total,
             (${DEVICES})[1 + floor(${G}.u(s.key, i, 11) * s.n_devices)::int] AS device,
             date_trunc('second', s.start_at + make_interval(secs => sp.span * (ix.j + 0.5 * ${G}.u(s.key, ix.j, 5)) / s.n_actions))
               + interval '60 seconds' AS changed,
             s.key, i
        FROM ${G}.specs s
       CROSS JOIN LATERAL (SELECT extract(epoch FROM s.end_at - s.start_at)::float8 AS span) sp
       CROSS JOIN LATERAL generate_series(
               greatest(0, floor(extract(epoch FROM $1::timestamptz - s.start_at) / sp.span * s.n_actions)::int - 1),
               least(s.n_actions - 1, ceil(extract(epoch FROM $2::timestamptz - s.start_at) / sp.span * s.n_actions)::int + 1)) i
       CROSS JOIN LATERAL (SELECT date_trunc('second', s.start_at + make_interval(secs => sp.span * (i + 0.5 * ${G}.u(s.key, i, 5)) / s.n_actions)) AS at) t
       -- Three actions an episode: downloaded, played part of the way, then played to the end, deleted or marked new.
       CROSS JOIN LATERAL (SELECT i / 3 AS e, i % 3 AS step, least(s.n_actions - 1, (i / 30) * 30 + 29) AS j) ix
       CROSS JOIN LATERAL (SELECT 1 + floor(${G}.u(s.key, ix.e, 6) * s.subs)::int AS slot,
                                  floor(${G}.u(s.key, ix.e, 7) * 100)::int AS k,
                                  1200 + floor(${G}.u(s.key, ix.e, 8) * 4800)::int AS total,
                                  ${G}.u(s.key, ix.e, 10) AS fate) ep0
       CROSS JOIN LATERAL (SELECT ep0.k, ep0.total, floor(ep0.total * ${G}.u(s.key, ix.e, 9))::int AS part) ep
       CROSS JOIN LATERAL (SELECT ix.step, CASE ix.step WHEN 0 THEN 'download' WHEN 1 THEN 'play'
                                  ELSE CASE WHEN ep0.fate < 0.6 THEN 'play' WHEN ep0.fate < 0.9 THEN 'delete' ELSE 'new' END END AS action) a
        JOIN ${G}.subs b ON b.key = s.key AND b.slot = ep0.slot
        JOIN ${G}.feeds f ON f.rank = b.rank
       WHERE s.n_actions > 0 AND s.start_at < $2 AND s.end_at >= $1 AND t.at >= $1 AND t.at < $2) x
   ORDER BY x.changed, x.key, x.i`;

/**
 * Writes the data set of this SCALE (0: the measured users alone, the baseline) into an empty, migrated
 * database; feeds are at `port` on the loopback hosts. Returns the time each step took (s) and the counts.
 */
export async function generate(url, { scale, port, passwordHash, log }) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const seconds = {};
  const t00 = Date.now();
  const step = async (name, fn) => {
    const t = Date.now();
    await fn();
    seconds[name] = (Date.now() - t) / 1000;
    log(`  ${name}: ${seconds[name].toFixed(1)} s`);
  };
  const q = (text, values) => client.query(text, values);
  try {
    // A bulk load: no foreign-key triggers (the rows are consistent by construction), big sorts in memory.
    await q(`SET session_replication_role = replica; SET work_mem = '256MB'; SET maintenance_work_mem = '1GB';
             SET synchronous_commit = off`);
    await q(`DROP SCHEMA IF EXISTS ${G} CASCADE; CREATE SCHEMA ${G}; ${U}`);
    const feeds = feedCount(scale);
    await step('feeds and users', async () => {
      await q(`CREATE TABLE ${G}.feeds (rank int PRIMARY KEY, url text NOT NULL, url_hash uuid NOT NULL, guid uuid NOT NULL,
                                        declared uuid)`);
      for (let from = 1; from <= feeds; from += 10_000) {
        const ranks = Array.from({ length: Math.min(10_000, feeds - from + 1) }, (_, k) => from + k);
        const urls = ranks.map((r) => feedUrl(port, r));
        await q(
          `INSERT INTO ${G}.feeds SELECT * FROM unnest($1::int[], $2::text[], $3::uuid[], $4::uuid[], $5::uuid[])`,
          [
            ranks,
            urls,
            urls.map((u) => urlHash(checkFeedUrl(u).key)),
            urls.map(podcastGuid),
            ranks.map((r) => (declaresGuid(r) ? declaredGuid(r) : null)),
          ],
        );
      }
      await q(`CREATE TABLE ${G}.specs (key int PRIMARY KEY, username text NOT NULL, kind text NOT NULL,
                 n_subs int NOT NULL, n_actions int NOT NULL, start_at timestamptz NOT NULL, end_at timestamptz NOT NULL,
                 n_devices int NOT NULL, zipf_f int NOT NULL, user_id bigint, subs int)`);
      const [insert, ...updates] = specsSql(scale);
      await q(`INSERT INTO ${G}.specs (key, username, kind, n_subs, n_actions, start_at, end_at, n_devices, zipf_f)
               SELECT x.* FROM (SELECT date_trunc('second', now()) AS t0) t0, LATERAL (${insert}) x`);
      for (const u of updates) await q(u);
      await q(
        `INSERT INTO users (username, password_hash, created_at, last_change)
               SELECT username, $1, start_at, start_at FROM ${G}.specs ORDER BY start_at, key`,
        [passwordHash],
      );
      await q(`UPDATE ${G}.specs s SET user_id = u.id FROM users u WHERE u.username = s.username`);
      await q(`INSERT INTO devices (user_id, device_id, caption, type, created_at, last_seen)
               SELECT s.user_id, d.name, d.name, 'other', s.start_at, s.end_at
                 FROM ${G}.specs s CROSS JOIN LATERAL unnest((${DEVICES})[1:s.n_devices]) d (name)`);
      // When each was last seen (noted hourly by the requests its apps sign): its last activity.
      await q(`INSERT INTO user_activity (user_id, seen_at) SELECT user_id, end_at FROM ${G}.specs`);
      // An app password per device.
      await q(`INSERT INTO tokens (user_id, kind, token_hash, label, created_at, used_at)
               SELECT s.user_id, 'personal', sha256(convert_to(s.key || '/' || d.name || '/' || random(), 'UTF8')), d.name,
                      s.start_at, s.end_at
                 FROM ${G}.specs s CROSS JOIN LATERAL unnest((${DEVICES})[1:s.n_devices]) d (name)`);
    });
    await step('subscriptions', async () => {
      // Feeds drawn by Zipf's law over the ranks (rank r about 1/r as often as rank 1): a few feeds are in
      // most lists. 60 % of a list came in one write when the account began (an OPML import), the rest
      // one by one; 3 in 10 of those were unsubscribed later. A feed that declares its own guid had it
      // adopted by the fetcher, as a write of its own, within a day of the subscription.
      await q(`CREATE TABLE ${G}.subs AS
        WITH drawn AS (
          SELECT s.key, z.rank, min(j) AS j
            FROM ${G}.specs s
           CROSS JOIN LATERAL generate_series(1, ceil(s.n_subs * 1.8)::int) j
           CROSS JOIN LATERAL (SELECT least(s.zipf_f, floor(exp(${G}.u(s.key, j, 1) * ln(s.zipf_f + 1.0))))::int AS rank) z
           GROUP BY s.key, z.rank),
        ranked AS (SELECT key, rank, row_number() OVER (PARTITION BY key ORDER BY j)::int AS slot FROM drawn)
        SELECT s.user_id, s.key, r.rank, r.slot, c.created, c.unsub,
               CASE WHEN c.unsub THEN date_trunc('second', c.created + (s.end_at - c.created) * ${G}.u(s.key, r.slot, 4))
                                      + interval '500 ms' ELSE c.created END AS changed,
               CASE WHEN f.declared IS NOT NULL THEN date_trunc('second', least(c.created + interval '1 hour'
                         + ${G}.u(s.key, r.slot, 5) * interval '23 hours', now() - interval '1 minute')) + interval '250 ms'
               END AS guid_changed,
               NULL::bigint AS sub_id
          FROM ranked r JOIN ${G}.specs s USING (key) JOIN ${G}.feeds f USING (rank)
         CROSS JOIN LATERAL (
           SELECT CASE WHEN r.slot <= ceil(0.6 * s.n_subs) THEN date_trunc('second', s.start_at)
                       ELSE date_trunc('second', s.start_at + (s.end_at - s.start_at) * ${G}.u(s.key, r.slot, 2)) END
                    + interval '500 ms' AS created,
                  r.slot > ceil(0.6 * s.n_subs) AND ${G}.u(s.key, r.slot, 3) < 0.3 AS unsub) c
         WHERE r.slot <= s.n_subs`);
      await q(`INSERT INTO subscriptions (user_id, guid, feed_url, url_hash, is_subscribed, subscription_changed, guid_changed)
               SELECT b.user_id, coalesce(f.declared, f.guid), f.url, f.url_hash, NOT b.unsub, b.changed, b.guid_changed
                 FROM ${G}.subs b JOIN ${G}.feeds f USING (rank) ORDER BY b.created, b.key, b.slot`);
      await q(`UPDATE ${G}.subs b SET sub_id = s.id FROM ${G}.feeds f, subscriptions s
                WHERE f.rank = b.rank AND s.user_id = b.user_id AND s.url_hash = f.url_hash`);
      await q(`CREATE INDEX ON ${G}.subs (key, slot)`);
      await q(`UPDATE ${G}.specs s SET subs = (SELECT count(*) FROM ${G}.subs b WHERE b.key = s.key)`);
      await q(`INSERT INTO subscription_guids (user_id, guid, subscription_id, replaced_at)
               SELECT b.user_id, f.guid, b.sub_id, b.guid_changed FROM ${G}.subs b JOIN ${G}.feeds f USING (rank)
                WHERE b.guid_changed IS NOT NULL ORDER BY b.guid_changed`);
      await q(`INSERT INTO feed_changes (user_id, subscription_id, at, kind, source, old_value, new_value)
               SELECT b.user_id, b.sub_id, b.guid_changed, 'guid', 'podcast:guid', f.guid::text, f.declared::text
                 FROM ${G}.subs b JOIN ${G}.feeds f USING (rank) WHERE b.guid_changed IS NOT NULL ORDER BY b.guid_changed`);
    });
    // The action tables' indexes are built after the load, from their definitions (the primary keys stay).
    const { rows: indexes } = await q(`SELECT indexname, indexdef FROM pg_indexes i
      WHERE tablename IN ('episode_actions', 'episode_latest')
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`);
    await step('episode actions', async () => {
      for (const { indexname } of indexes) await q(`DROP INDEX ${indexname}`);
      const { rows } = await q(`SELECT date_trunc('month', min(start_at)) AS first, now() AS last FROM ${G}.specs
                                 WHERE n_actions > 0`);
      for (let m = new Date(rows[0].first); m < rows[0].last; m.setUTCMonth(m.getUTCMonth() + 1)) {
        const next = new Date(m);
        next.setUTCMonth(next.getUTCMonth() + 1);
        await q(ACTIONS_IN, [m, next]);
      }
      // Each episode's latest action of each type (by its own time; ties: the later stored), as the intake keeps it.
      await q(`INSERT INTO episode_latest (user_id, episode_hash, action, action_id, at, changed)
               SELECT DISTINCT ON (user_id, episode_hash, action) user_id, episode_hash, action, id, at, changed
                 FROM episode_actions ORDER BY user_id, episode_hash, action, at DESC, id DESC`);
    });
    await step('indexes', async () => {
      for (const { indexdef } of indexes) await q(indexdef);
    });
    await step('users and feeds', async () => {
      await q(`UPDATE users u SET last_change = greatest(u.last_change, x.last), record_count = x.records
                 FROM (SELECT s.user_id,
                              greatest((SELECT max(changed) FROM episode_actions a WHERE a.user_id = s.user_id),
                                       (SELECT max(greatest(changed, guid_changed)) FROM ${G}.subs b WHERE b.key = s.key)) AS last,
                              (SELECT count(*) FROM ${G}.subs b WHERE b.key = s.key) AS records
                         FROM ${G}.specs s) x
                WHERE u.id = x.user_id`);
      await q(`INSERT INTO feed_discovery (user_id, noted_until, noted_id)
               SELECT id, last_change, 9223372036854775807 FROM users`);
      // Every feed someone subscribed to, fetched within the last day and due within the next.
      await q(`INSERT INTO feeds (url_hash, feed_url, title, podcast_guid, fetched_at, next_fetch_at, created_at)
               SELECT f.url_hash, f.url, 'Show ' || f.rank, f.declared, now() - ${G}.u(f.rank, 0, 20) * interval '1 day',
                      now() + ${G}.u(f.rank, 0, 21) * interval '1 day', b.created
                 FROM ${G}.feeds f JOIN (SELECT rank, min(created) AS created FROM ${G}.subs GROUP BY rank) b USING (rank)
                ORDER BY b.created`);
    });
    await step('feed items', async () => {
      // The popular feeds' items, as the fetcher stores what the loopback server serves.
      const { rows } = await q(
        `SELECT f.rank, f.url_hash FROM ${G}.feeds f JOIN feeds x USING (url_hash)
                                 WHERE f.rank <= $1 ORDER BY f.rank`,
        [popularCount(feeds)],
      );
      for (const { rank, url_hash } of rows) {
        const facts = parseFeed(Buffer.from(feedXml(rank)));
        await feedsRepo.saveFetched(client, url_hash, { facts, etag: null, lastModified: null, movedTo: null }, 86_400);
        await feedsRepo.saveItems(client, url_hash, facts.items);
      }
    });
    await q(`DROP SCHEMA ${G} CASCADE`);
    await q('RESET session_replication_role');
    await step('vacuum and analyze', () => q('VACUUM (FREEZE, ANALYZE)'));
    const counts = (
      await q(`SELECT (SELECT count(*) FROM users)::int AS users,
                      (SELECT count(*) FROM users WHERE last_change > now() - interval '365 days')::int AS active,
                      (SELECT count(*) FROM subscriptions)::int AS subscriptions,
                      (SELECT count(*) FROM episode_actions)::int AS actions,
                      (SELECT count(*) FROM episode_latest)::int AS latest,
                      (SELECT count(*) FROM feeds)::int AS feeds,
                      (SELECT count(*) FROM feed_items)::int AS feed_items`)
    ).rows[0];
    return { seconds: { ...seconds, total: (Date.now() - t00) / 1000 }, counts };
  } finally {
    await client.end();
  }
}
