import request from 'supertest';
import { VERSION } from '../../src/version';
import { testApp, type TestApp } from '../helpers/app';
import { signedInAgent } from '../helpers/web';

// "Connect an app": each app's fields with this server's address filled in, and the release in the footer.

let t: TestApp;
beforeAll(async () => {
  // Plain http: with an https PUBLIC_URL every cookie is Secure, and this test's client, over plain http,
  // would not send the sign-in form's cookie back (test/integration/web.test.ts covers that case).
  t = await testApp({ PUBLIC_URL: 'http://sync.example.org' });
});
afterAll(() => t.close());

test('each app is shown with the public address and the person filled in, and the footer names the release', async () => {
  const u = await t.user('apps');
  const { agent } = await signedInAgent(t.app, u.name, u.password);
  const page = await agent.get('/web/apps');
  expect(page.status).toBe(200);
  for (const app of ['AntennaPod', 'KDE Kasts', 'gPodder', 'Podcini', 'Music Assistant', 'Open Podcast API'])
    expect(page.text).toContain(app);
  expect(page.text).toContain('<code>http://sync.example.org</code>');
  // Music Assistant's two modes (docs/apps.md): what its gPodder mode sees, and the mode that sees all.
  expect(page.text).toMatch(/Music Assistant<\/h2>[^]*?its Nextcloud mode instead: Nextcloud URL/);
  expect(page.text).toContain('<code>sync.example.org</code>');
  expect(page.text).toContain(`<strong>${u.name}</strong>`);
  expect(page.text).toContain('aria-current="page">Connect an app</a>');
  expect(page.text).toContain(`castsync ${VERSION}`);
});

test('signed out, the page is not shown', async () => {
  const r = await request(t.app).get('/web/apps');
  expect(r.status).toBe(303);
});
