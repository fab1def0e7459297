import request from 'supertest';
import { testApp, type TestApp } from '../helpers/app';
import { csrfOf, signedInAgent } from '../helpers/web';

// The web page's colours, chosen on the account page: kept per person on the server and written by the
// layout as <html data-theme> on every page, so that they hold without script.

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

test('a choice of colours is kept for the person, shown on every page; a colour not offered is refused', async () => {
  const u = await t.user('colours');
  const other = await t.user('colours');
  const { agent } = await signedInAgent(t.app, u.name, u.password);
  const account = await agent.get('/web/account');
  expect(account.text).toContain('<html lang="en" data-theme="system">');
  expect(account.text).toMatch(/<input type="radio" id="theme-system" name="theme" value="system" checked>/);
  const choose = (theme: string) =>
    agent
      .post('/web/account/theme')
      .type('form')
      .send({ _csrf: csrfOf(account.text), theme });

  const refused = await choose('purple');
  expect(refused.status).toBe(400);
  expect(refused.text).toContain('theme: one of system, light, dark');
  const saved = await choose('dark');
  expect(saved.status).toBe(200);
  expect(saved.text).toContain('Your colours were saved.');
  expect(saved.text).toContain('<html lang="en" data-theme="dark">');
  expect(saved.text).toMatch(/id="theme-dark" name="theme" value="dark" checked>/);
  expect((await agent.get('/web/subscriptions')).text).toContain('<html lang="en" data-theme="dark">');
  // Another person's pages keep their own colours; a page before sign-in follows the browser.
  const theirs = await signedInAgent(t.app, other.name, other.password);
  expect((await theirs.agent.get('/web/new')).text).toContain('<html lang="en" data-theme="system">');
  expect((await request(t.app).get('/')).text).toContain('<html lang="en">');
});
