import { statSync } from 'node:fs';
import path from 'node:path';
import { browserWorld } from '../helpers/browser';
import { LOOPBACK, showcase } from '../helpers/showcase';

// `npm run screenshots` (after `npm run build`): the sign-in page, Subscriptions, New episodes and an
// episode, at phone (390 × 844) and desktop (1280 × 800) width, light and dark, into docs/screenshots as
// `<page>-<phone|desktop>-<light|dark>.png`. castsync on the tests' embedded PostgreSQL, a person with two
// podcasts from a loopback feed server (test/helpers/showcase.ts). Not one of the tests: jest runs it
// only when asked for by name (its file does not end in .test.ts).

const OUT = path.join(__dirname, '..', '..', 'docs', 'screenshots');
const world = browserWorld(() => LOOPBACK);

const sizes = { phone: [390, 844], desktop: [1280, 800] } as const;

test('the screenshots of docs/web.md', async () => {
  const { t, origin } = world;
  const show = await showcase(t);
  const signedIn = {
    subscriptions: '/web/subscriptions',
    'new-episodes': '/web/new',
    episode: `/web/episodes/${show.episodeId}`,
  };
  const written: string[] = [];
  for (const [size, [width, height]] of Object.entries(sizes)) {
    for (const theme of ['light', 'dark']) {
      const page = await world.newPage(width, height);
      await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: theme }]);
      const shoot = async (name: string, where: string) => {
        if (new URL(page.url()).pathname !== where) await page.goto(origin + where);
        expect(new URL(page.url()).pathname).toBe(where);
        // Every image drawn, no field focused (the sign-in page's autofocus would show its ring).
        await page.waitForFunction('[...document.images].every((i) => i.complete)');
        await page.evaluate('document.activeElement?.blur()');
        written.push(path.join(OUT, `${name}-${size}-${theme}.png`));
        await page.screenshot({ path: written.at(-1)! });
      };
      await shoot('sign-in', '/');
      expect(await world.signIn(page, show.user)).toBe(200);
      for (const [name, where] of Object.entries(signedIn)) await shoot(name, where);
      await page.browserContext().close();
    }
  }
  expect(written.filter((f) => statSync(f).size > 0)).toHaveLength(16);
  await show.close();
}, 300_000);
