// The scale bench's requests, each measured on the baseline and on the SCALE data set in turn (the same
// measured users on both), ROUNDS windows each, medians: latency, throughput, CPU per request (castsync's
// process and the cluster's), and peak resident memory.
import { CONN, json, load, median, PASSWORD, ROUNDS, SECONDS } from '../lib.mjs';
import { clusterPids, cpuMs, sampleMemory } from './proc.mjs';
import { feedUrl } from './shape.mjs';
import { HISTORY_USER, probeNames } from './world.mjs';

const basicOf = (name) => 'Basic ' + Buffer.from(`${name}:${PASSWORD}`).toString('base64');

/** Signs in on the web page as a browser does; the session cookie. */
async function webCookie(origin, name) {
  const page = await fetch(`${origin}/`, { redirect: 'manual' });
  const csrf = page.headers.getSetCookie().find((c) => c.startsWith('castsync_csrf='));
  const token = /name="_csrf" value="([^"]*)"/.exec(await page.text())?.[1];
  const r = await fetch(`${origin}/web/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: csrf?.split(';')[0] ?? '' },
    body: new URLSearchParams({ _csrf: token ?? '', username: name, password: PASSWORD }),
  });
  const session = r.headers.getSetCookie().find((c) => c.startsWith('castsync_web='));
  if (r.status !== 303 || !session) throw new Error(`web sign-in of ${name}: ${r.status}`);
  return session.split(';')[0];
}

/** A measured user: credentials, and the `since` of an app that synced before its last upload. */
async function userOf(world, name) {
  const { rows } = await world.pool.query(
    `SELECT u.id,
            (SELECT floor(extract(epoch FROM max(a.changed)))::bigint FROM episode_actions a WHERE a.user_id = u.id) AS action_since,
            (SELECT floor(extract(epoch FROM s.changed))::bigint FROM subscriptions s WHERE s.user_id = u.id
              ORDER BY s.changed DESC OFFSET 2 LIMIT 1) AS sub_since,
            array(SELECT feed_url FROM subscriptions s WHERE s.user_id = u.id AND s.is_subscribed ORDER BY s.id) AS feeds
       FROM users u WHERE u.username = $1`,
    [name],
  );
  const row = rows[0];
  if (!row) throw new Error(`no user ${name} in the ${world.name} data set`);
  return {
    name,
    id: row.id,
    basic: basicOf(name),
    cookie: await webCookie(world.origin, name),
    actionSince: row.action_since ?? 0,
    subSince: row.sub_since ?? 0,
    feeds: row.feeds,
  };
}

/** The measured users of a data set, and its big users (none in the baseline). */
export async function usersOf(world) {
  const probes = [];
  for (const name of probeNames) probes.push(await userOf(world, name));
  const { rows } = await world.pool.query(`SELECT username FROM users WHERE username LIKE 'big%' ORDER BY id LIMIT 1`);
  return {
    probes,
    history: await userOf(world, HISTORY_USER),
    big: rows[0] ? await userOf(world, rows[0].username) : undefined,
  };
}

const get = (path, headers) => ({ method: 'GET', path, headers });
const post = (path, headers, body) => ({
  method: 'POST',
  path,
  headers: { ...headers, 'content-type': 'application/json' },
  body: JSON.stringify(body),
});
const each = (list, f) => (i) => f(list[i % list.length], i);

/** The reads, on data that no write of the bench has changed yet. */
export const READS = {
  gpodder_pull: ({ probes }) =>
    each(probes, (u) =>
      get(`/api/2/subscriptions/${u.name}/phone.json?since=${u.subSince}`, { authorization: u.basic }),
    ),
  since_recent: ({ probes }) =>
    each(probes, (u) => get(`/api/2/episodes/${u.name}.json?since=${u.actionSince}`, { authorization: u.basic })),
  since_0_history:
    ({ history }) =>
    () =>
      get(`/api/2/episodes/${history.name}.json?since=0`, { authorization: history.basic }),
  opa_subscriptions: ({ probes }) =>
    each(probes, (u) => get('/v1/subscriptions?per_page=50', { authorization: u.basic })),
  opa_episodes: ({ probes }) => each(probes, (u) => get('/v1/episodes?per_page=50', { authorization: u.basic })),
  web_in_progress: ({ probes }) => each(probes, (u) => get('/web/in-progress', { cookie: u.cookie })),
};

let seq = 0;
/** The writes: a device adds a feed, then removes it again; and an upload of 30 plays of the user's episodes. */
export const WRITES = {
  gpodder_push: ({ probes }, world) => {
    const turn = new Map();
    return each(probes, (u) => {
      const n = (turn.get(u.name) ?? 0) + 1;
      turn.set(u.name, n);
      // A feed of the loopback hosts that no data set has (the fetcher's cycle may fetch it).
      const feed = feedUrl(world.feedPort, 1_000_000 + probeNames.indexOf(u.name));
      return post(
        `/api/2/subscriptions/${u.name}/phone.json`,
        { authorization: u.basic },
        {
          add: n % 2 ? [feed] : [],
          remove: n % 2 ? [] : [feed],
        },
      );
    });
  },
  episode_upload_30: ({ probes }) =>
    each(probes, (u) => {
      const at = Date.UTC(2026, 0, 1) + seq++ * 1000;
      return post(
        `/api/2/episodes/${u.name}.json`,
        { authorization: u.basic },
        Array.from({ length: 30 }, (_, k) => {
          const feed = u.feeds[k % u.feeds.length];
          const rank = /\/(\d+)\.xml$/.exec(feed)?.[1];
          return {
            podcast: feed,
            episode: `https://media.example/${rank}/episode-${k}.mp3`,
            action: 'play',
            timestamp: new Date(at + k).toISOString().slice(0, 19),
            started: 0,
            position: seq % 3000,
            total: 3600,
            device: 'phone',
          };
        }),
      );
    }),
};

/** One window of load on a world: latency, throughput, CPU per request, peak memory. */
async function window(world, make, seconds = SECONDS, conn = CONN) {
  const node = world.serverPid();
  const cpu0 = [cpuMs([node]), cpuMs(clusterPids(world.pgDir))];
  const stopSampling = sampleMemory(node, world.pgDir);
  const r = await load(world.origin, make, seconds, conn);
  const memory = stopSampling();
  const n = Math.max(1, r.rps * seconds);
  return {
    ...r,
    server_cpu_ms: (cpuMs([node]) - cpu0[0]) / n,
    postgres_cpu_ms: (cpuMs(clusterPids(world.pgDir)) - cpu0[1]) / n,
    ...memory,
  };
}

const summary = (rows) => ({
  p50_ms: median(rows.map((x) => x.p50)),
  p99_ms: median(rows.map((x) => x.p99)),
  rps: median(rows.map((x) => x.rps)),
  server_cpu_ms: median(rows.map((x) => x.server_cpu_ms)),
  postgres_cpu_ms: median(rows.map((x) => x.postgres_cpu_ms)),
  node_rss_mib: Math.max(...rows.map((x) => x.node_rss_mib)),
  postgres_rss_mib: Math.max(...rows.map((x) => x.postgres_rss_mib)),
  errors: rows.reduce((n, x) => n + x.errors, 0),
});

/**
 * Each request of `requests` on both worlds in turn, ROUNDS windows each (the order alternating): the
 * figures of each world and the ratios SCALE ÷ baseline of p50 and p99.
 */
export async function compare(log, worlds, requests, conn = CONN) {
  const out = {};
  for (const [label, makeOf] of Object.entries(requests)) {
    const rows = worlds.map(() => []);
    for (let r = 0; r < ROUNDS; r++) {
      for (const w of r % 2 ? [1, 0] : [0, 1]) {
        rows[w].push(await window(worlds[w], makeOf(worlds[w].users, worlds[w]), SECONDS, conn));
      }
    }
    const [base, scaled] = rows.map(summary);
    out[label] = {
      baseline: base,
      scale: scaled,
      p50_ratio: scaled.p50_ms / base.p50_ms,
      p99_ratio: scaled.p99_ms / base.p99_ms,
    };
    log(
      `  ${label}: p99 ${base.p99_ms.toFixed(1)} -> ${scaled.p99_ms.toFixed(1)} ms (x${out[label].p99_ratio.toFixed(2)})`,
    );
  }
  return out;
}

/** Every read once for a while on each world, untimed: caches, prepared statements and remembered credentials. */
export async function warmUp(worlds) {
  for (const w of worlds) {
    for (const makeOf of Object.values(READS)) await load(w.origin, makeOf(w.users, w), 1, CONN);
  }
}

/** A request that takes seconds (a whole archive, a 200,000-action download), `times` one after the other. */
export async function sequential(world, make, times) {
  const node = world.serverPid();
  const stopSampling = sampleMemory(node, world.pgDir);
  const cpu0 = [cpuMs([node]), cpuMs(clusterPids(world.pgDir))];
  const ms = [];
  let bytes = 0;
  for (let i = 0; i < times; i++) {
    const { method, path, headers } = make(i);
    const t0 = process.hrtime.bigint();
    const r = await fetch(world.origin + path, { method, headers });
    const body = await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`${path}: ${r.status}`);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
    bytes = body.byteLength;
  }
  const memory = stopSampling();
  ms.sort((a, b) => a - b);
  return {
    p50_ms: median(ms),
    max_ms: ms.at(-1),
    bytes,
    server_cpu_ms: (cpuMs([node]) - cpu0[0]) / times,
    postgres_cpu_ms: (cpuMs(clusterPids(world.pgDir)) - cpu0[1]) / times,
    ...memory,
  };
}

export const exportOf = (u) => () => get('/web/export', { cookie: u.cookie });
export const fullDownloadOf = (u) => () => get(`/api/2/episodes/${u.name}.json?since=0`, { authorization: u.basic });

/**
 * The data set read back through the API, against what the app writes: a twin of the first measured user
 * is given the same feeds (POST /v1/subscriptions) and the same actions (the user's full download,
 * uploaded as an app would), and every stored column of the two users' records, actions and latest
 * actions must be equal. Throws on any difference.
 */
export async function checkAgainstApp(world) {
  const { pool, origin } = world;
  const u = world.users.probes[0];
  const twin = `twin-${u.name}`;
  await pool.query(`INSERT INTO users (username, password_hash) SELECT $1, password_hash FROM users WHERE id = $2`, [
    twin,
    u.id,
  ]);
  const twinId = (await pool.query('SELECT id FROM users WHERE username = $1', [twin])).rows[0].id;
  const { rows: feeds } = await pool.query(`SELECT feed_url FROM subscriptions WHERE user_id = $1 ORDER BY id`, [u.id]);
  const subscribed = await json(
    origin,
    'POST',
    '/v1/subscriptions',
    { authorization: basicOf(twin) },
    {
      subscriptions: feeds.map((f) => ({ feed_url: f.feed_url })),
    },
  );
  if (subscribed.status !== 200) throw new Error(`twin subscriptions: ${subscribed.status}`);
  const download = await fetch(`${origin}/api/2/episodes/${u.name}.json?since=0`, {
    headers: { authorization: u.basic },
  });
  const text = await download.text();
  const { actions } = JSON.parse(text);
  // The JSON written with each action is compact, in the order JSON.stringify writes.
  if (!text.includes(actions.map((a) => JSON.stringify(a)).join(','))) throw new Error('action JSON differs');
  const uploaded = await json(
    origin,
    'POST',
    `/api/2/episodes/${twin}.json`,
    { authorization: basicOf(twin) },
    actions,
  );
  if (uploaded.status !== 200) throw new Error(`twin upload: ${uploaded.status}`);
  const differ = async (what, sql) => {
    const r = await pool.query(
      `SELECT count(*)::int AS n FROM ((${sql.replaceAll('$U', '$1')} EXCEPT ${sql.replaceAll('$U', '$2')})
                                UNION ALL (${sql.replaceAll('$U', '$2')} EXCEPT ${sql.replaceAll('$U', '$1')})) d`,
      [u.id, twinId],
    );
    if (r.rows[0].n > 0) throw new Error(`${world.name}: ${r.rows[0].n} ${what} differ from what the app writes`);
  };
  await differ(
    'actions',
    `SELECT a.podcast_url, a.podcast_hash, s.feed_url, a.episode_url, a.episode_hash, a.episode_guid, a.action, a.at,
            a.started, a.position, a.total, a.device_id, a.json
       FROM episode_actions a LEFT JOIN subscriptions s ON s.user_id = a.user_id AND s.id = a.subscription_id WHERE a.user_id = $U`,
  );
  await differ(
    'latest actions',
    `SELECT l.episode_hash, l.action, l.at, a.json FROM episode_latest l
       JOIN episode_actions a ON a.user_id = l.user_id AND a.id = l.action_id WHERE l.user_id = $U`,
  );
  // Records, as created (the adopted guids and unsubscriptions are later writes of their own).
  await differ('records', `SELECT feed_url, url_hash FROM subscriptions WHERE user_id = $U`);
  await differ('devices', `SELECT device_id, caption, type FROM devices WHERE user_id = $U`);
  return { actions: actions.length, records: feeds.length };
}
