// The gpodder.net v2 door against the equivalent /v1 request, in the same run: a pull that finds 50 changes
// of a user's 1,000 (with the session cookie, as AntennaPod and mygpoclient; and with Basic on every
// request, as Kasts), and pushes of 100 and 1,000 new feeds (a first sync).
import { newFeedsBody } from '../context.mjs';
import { json, load, log, median, ROUNDS, sleep } from '../lib.mjs';

const ratioRow = (g, o) => ({
  gpodder_rps: g.rps,
  opa_rps: o.rps,
  ratio: g.rps / o.rps,
  gpodder_p99_ms: g.p99,
  opa_p99_ms: o.p99,
  errors: g.errors + o.errors,
});

export default async function gpodder(ctx, results) {
  const { pool, origin, users } = ctx;
  log('measuring the gpodder API against /v1 ...');
  const pullMark = Date.now();
  await sleep(1100);
  for (const [u, user] of users.entries()) {
    const login = await fetch(`${origin}/api/2/auth/${user.name}/login.json`, {
      method: 'POST',
      headers: { authorization: user.basic },
    });
    user.cookie = /sessionid=([^;]+)/.exec(login.headers.get('set-cookie') ?? '')?.[1];
    const r = await json(
      origin,
      'POST',
      '/v1/subscriptions',
      { authorization: user.bearer },
      {
        subscriptions: Array.from({ length: 50 }, (_, k) => ({
          feed_url: `https://feeds.bench.example/${u}/show-${k * 19}/feed.xml`,
        })),
      },
    );
    if (r.status !== 200) throw new Error(`gpodder mark POST ${r.status}`);
  }
  const pullSince = Math.ceil(pullMark / 1000);
  const opaSince = encodeURIComponent(new Date(pullMark).toISOString());
  const gpodderPull = (auth) => (i) => {
    const u = users[i % users.length];
    return {
      method: 'GET',
      path: `/api/2/subscriptions/${u.name}/bench.json?since=${pullSince}`,
      headers: auth === 'cookie' ? { cookie: `sessionid=${u.cookie}` } : { authorization: u.basic },
    };
  };
  const opaPull = (i) => ({
    method: 'GET',
    path: `/v1/subscriptions?since=${opaSince}&per_page=50`,
    headers: { authorization: users[i % users.length].bearer },
  });
  const check = await json(origin, 'GET', gpodderPull('basic')(0).path, { authorization: users[0].basic });
  if (check.body.add.length !== 50) throw new Error(`the gpodder pull found ${check.body.add.length} changes, not 50`);
  const gpodderPush = (n) => (i) => {
    const u = users[i % users.length];
    const tag = `g${n}-${ctx.next()}`;
    return {
      method: 'POST',
      path: `/api/2/subscriptions/${u.name}/bench.json`,
      headers: { cookie: `sessionid=${u.cookie}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        add: Array.from({ length: n }, (_, k) => `https://push.bench.example/${tag}/${k}.xml`),
        remove: [],
      }),
    };
  };
  const opaPush = (n) => (i) => ({
    method: 'POST',
    path: '/v1/subscriptions',
    headers: { authorization: users[i % users.length].bearer, 'content-type': 'application/json' },
    body: newFeedsBody(ctx, `o${n}`, n, 'push.bench.example'),
  });
  const figures = {};
  for (const [name, g, o] of [
    ['pull 50 changes (cookie)', gpodderPull('cookie'), opaPull],
    ['pull 50 changes (Basic every request)', gpodderPull('basic'), opaPull],
    ['push 100 new feeds', gpodderPush(100), opaPush(100)],
    ['push 1,000 new feeds', gpodderPush(1000), opaPush(1000)],
  ]) {
    const rows = [];
    for (let r = 0; r < ROUNDS; r++) rows.push([await load(origin, g), await load(origin, o)]);
    const mid = (f) => median(rows.map(f));
    const side = (s) => ({
      rps: mid((x) => x[s].rps),
      p99: mid((x) => x[s].p99),
      errors: rows.reduce((n, x) => n + x[s].errors, 0),
    });
    figures[name] = ratioRow(side(0), side(1));
  }
  results['gpodder vs /v1'] = figures;
  await pool.query(`DELETE FROM subscriptions WHERE feed_url LIKE 'https://push.bench.example/%'`);
  await pool.query('UPDATE users u SET record_count = (SELECT count(*) FROM subscriptions s WHERE s.user_id = u.id)');
}
