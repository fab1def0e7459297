// HTTP Basic against a bearer token on the same GET: first as ../shared/bench/compare.mjs measures it (right
// after the POSTs, Basic's window its first, so one argon2 verification per user), then warm, per request.
import { getPage } from '../context.mjs';
import { load, log, median, ROUNDS } from '../lib.mjs';

export default async function basicBearer(ctx, results) {
  const { pool, origin, users } = ctx;
  log('measuring basic vs bearer ...');
  const basicGet = getPage(users, 'basic');
  const getBearer = getPage(users);
  // Tens of thousands of records per user by then; 20 hashes (about 50 ms of CPU each) inside 6 seconds.
  const coldBasic = await load(origin, basicGet);
  const bearerAfter = await load(origin, getBearer);
  results['GET page of 50 (basic vs bearer)'] = {
    basic_rps: coldBasic.rps,
    bearer_rps: bearerAfter.rps,
    ratio: coldBasic.rps / bearerAfter.rps,
    errors: coldBasic.errors + bearerAfter.errors,
  };
  // Resident set after all of the load: GETs, POSTs and the first password verifications.
  results.castsync_rss_mib = await ctx.rss();

  // Then per request, once every password is verified: the POSTs' records removed again, so that this is
  // the same GET as the first scenario (1,000 records per user), in alternating pairs.
  await pool.query(`DELETE FROM subscriptions WHERE feed_url LIKE 'https://new.bench.example/%'`);
  await pool.query('VACUUM ANALYZE');
  // A server whose connections started while every user had tens of thousands of records keeps planning
  // the list statement on every GET once they are back to 1,000 (PostgreSQL weighs a prepared
  // statement's generic plan against the cost of the custom plans it made so far): 0.57 against 0.32 ms
  // a page, measured. A table does not shrink by 97 % under a real server; the bench restarts castsync so
  // that what follows meets connections made on the data it measures.
  await ctx.restart();
  // Untimed, so that neither side of the first pair meets a cold process (code not yet compiled, the pool's
  // connections not yet opened and their statements not prepared): a short load of each.
  for (const warmUp of [basicGet, getBearer]) {
    if ((await load(origin, warmUp, 2)).errors) throw new Error('warm-up after the restart: errors');
  }
  const pairs = [];
  for (let r = 0; r < ROUNDS; r++) {
    // Alternate which goes first, so that neither always meets a colder or warmer server.
    const first = r % 2 === 0 ? await load(origin, basicGet) : await load(origin, getBearer);
    const second = r % 2 === 0 ? await load(origin, getBearer) : await load(origin, basicGet);
    const [basic, bearer] = r % 2 === 0 ? [first, second] : [second, first];
    pairs.push({ basic, bearer, ratio: basic.rps / bearer.rps });
  }
  results['GET page of 50 (basic vs bearer, warm)'] = {
    basic_rps: median(pairs.map((x) => x.basic.rps)),
    bearer_rps: median(pairs.map((x) => x.bearer.rps)),
    ratio: median(pairs.map((x) => x.ratio)),
    errors: pairs.reduce((n, x) => n + x.basic.errors + x.bearer.errors, 0),
  };
}
