import pino from 'pino';
import { as } from '../helpers/app';
import { browserWorld, check, submit, text } from '../helpers/browser';
import { runImportJob } from '../../src/transfer/jobs';
import { ARCHIVE_LIMITS, FEEDS, realisticMembers, writeArchive } from '../helpers/gpodder-archive';

// Import and export in a real browser: a person previews an import from another gpodder server (here a
// second user of the same castsync, reached over HTTP), imports it, and watches it run as a job.

const world = browserWorld();

/** Runs the queued import jobs as the worker would, and takes them off the queue. */
async function runJobs() {
  const { db } = world.t;
  const queued = await db.query<{ id: number }>(
    `SELECT (j.payload->>'importId')::int AS id FROM graphile_worker._private_jobs j ORDER BY j.id`,
  );
  for (const { id } of queued.rows) {
    await runImportJob(
      {
        db,
        logger: pino({ level: 'silent' }),
        policy: { allowPrivate: true, allowCidrs: [] },
        limits: { timeoutMs: 5000, maxBytes: 1 << 20, totalMs: 60_000, totalBytes: 1 << 24 },
        archive: ARCHIVE_LIMITS,
      },
      id,
    );
  }
  await db.query('DELETE FROM graphile_worker._private_jobs');
}

test('import from another server: preview, import, progress and summary; download my data', async () => {
  const { t, origin } = world;
  const there = await t.user('elsewhere');
  await as(t, there).post(`/api/2/devices/${there.name}/phone.json`, { caption: 'Old phone', type: 'mobile' });
  await as(t, there).post(`/api/2/subscriptions/${there.name}/phone.json`, {
    add: ['https://moving.example/one.xml', 'https://moving.example/two.xml'],
    remove: [],
  });
  await as(t, there).post(`/api/2/episodes/${there.name}.json`, [
    {
      podcast: 'https://moving.example/one.xml',
      episode: 'https://moving.example/1.mp3',
      action: 'play',
      position: 61,
      device: 'phone',
    },
  ]);
  const u = await t.user('arriving');
  for (const [width, height, suffix] of [
    [1280, 800, ''],
    [390, 844, '-phone'],
  ] as const) {
    const page = await world.newPage(width, height);
    expect(await world.signIn(page, u)).toBe(200);
    // Import and export is in the top bar on a wide screen; on a phone, in the More menu of the bar at the foot.
    if (suffix) await page.click('.more summary');
    expect(await submit(page, `${suffix ? '.more' : '.nav-all'} a[href="/web/moving"]`)).toBe(200);
    expect(await text(page, 'h1')).toEqual(['Import and export']);
    await check(page, `moving${suffix}`);
    if (suffix) continue;

    await page.type('#server_url', origin);
    await page.type('#remote_user', there.name);
    await page.type('#remote_password', there.password);
    expect(await submit(page, 'button[value="preview"]')).toBe(200);
    expect(await text(page, '.import [role="status"]')).toEqual(['Waiting to start.']);
    await check(page, 'moving-queued');
    // The page follows the job by itself: no reload.
    await runJobs();
    await page.waitForSelector('.import .notice.ok', { timeout: 10_000 });
    expect((await text(page, '.import .notice.ok'))[0]).toMatch(
      /^Preview done: nothing was changed. Importing would bring\s+2 new of 2 feeds, 1 new of 1 episode actions\s+and 1 new of 1 devices\.$/,
    );
    await check(page, 'moving-preview');

    await page.type('#server_url', origin);
    await page.type('#remote_user', there.name);
    await page.type('#remote_password', there.password);
    expect(await submit(page, 'button[value="import"]')).toBe(200);
    await runJobs();
    await page.reload();
    expect((await text(page, '.import .notice.ok'))[0]).toMatch(/^Done: imported\s+2 new of 2 feeds/);
    await check(page, 'moving-done');
    const feeds = (await as(t, u).get(`/subscriptions/${u.name}.json`)).body as string[];
    expect(feeds.sort()).toEqual(['https://moving.example/one.xml', 'https://moving.example/two.xml']);

    const href = await page.$eval('a[href="/web/export"]', (a) => a.textContent);
    expect(href).toBe('Download my data (JSON)');
    const archive = (await page.evaluate(async () => (await fetch('/web/export')).json())) as {
      episode_actions: unknown[];
    };
    expect(archive).toMatchObject({ format: 'castsync-archive', version: 1, user: u.name });
    expect(archive.episode_actions).toHaveLength(1);
  }
});

test('a gpodder.net archive: uploaded, previewed, then imported', async () => {
  const { t } = world;
  const u = await t.user('archived');
  const file = writeArchive(realisticMembers({ clean: true }));
  const page = await world.newPage();
  expect(await world.signIn(page, u, '/web/moving')).toBe(200);
  const upload = async (action: 'preview' | 'import') => {
    const input = await page.$('#gpodder-archive');
    await (input as unknown as { uploadFile: (f: string) => Promise<void> }).uploadFile(file);
    expect(await submit(page, `form[action="/web/import/gpodder-archive"] button[value="${action}"]`)).toBe(200);
    await runJobs();
    await page.reload();
  };
  await upload('preview');
  expect((await text(page, '.import .notice.ok'))[0]).toMatch(
    /^Preview done: nothing was changed. Importing would bring\s+2 new of 2 feeds, 4 new of 4 episode actions\s+and 4 new of 4 devices\.$/,
  );
  expect(await text(page, '.import h3, .import strong')).toContain('Preview of a gpodder.net archive');
  await check(page, 'gpodder-archive-preview');
  await upload('import');
  expect((await text(page, '.import .notice.ok'))[0]).toMatch(
    /^Done: imported\s+2 new of 2 feeds, 4 new of 4 episode actions/,
  );
  await check(page, 'gpodder-archive-done');
  const feeds = (await as(t, u).get(`/subscriptions/${u.name}.json`)).body as string[];
  expect(feeds.sort()).toEqual([FEEDS.cafe, FEEDS.show[0]].sort());
});
