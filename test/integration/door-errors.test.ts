import express from 'express';
import request from 'supertest';
import { InvalidInput } from '../../src/errors';
import { pageErrors } from '../../src/web/errors';
import { expectError, testApp, type TestApp } from '../helpers/app';
import { capturedLogger } from '../helpers/logs';
import { csrfOf, signedInAgent } from '../helpers/web';

// Each door answers errors in its own way, from one mapping of its own: the web page as pages (never
// JSON, never a 500 for a client's mistake), /v1 and gpodder with their `{code, message}` bodies.

let t: TestApp;
beforeAll(async () => {
  t = await testApp({ LOGIN_RATE_LIMIT: '2', AUTH_FAILURE_RATE_LIMIT: '2' });
});
afterAll(() => t.close());

const html = (r: request.Response) => expect(r.headers['content-type']).toMatch(/^text\/html/);
const basicOf = (name: string, password: string) => 'Basic ' + Buffer.from(`${name}:${password}`).toString('base64');

describe('the web page answers every error as a page', () => {
  test('an oversized sign-in form: 413 as HTML, with the sign-in form again', async () => {
    const agent = request.agent(t.app);
    const page = await agent.get('/');
    const r = await agent
      .post('/web/sign-in')
      .type('form')
      .send({ _csrf: csrfOf(page.text), username: 'someone', password: 'x'.repeat(100_000) });
    expect(r.status).toBe(413);
    html(r);
    expect(r.text).toContain('That form is larger than this page takes.');
    expect(r.text).toContain('<label for="password">Password</label>');
  });

  test('an OPML upload over 4 MiB: 413 as HTML on the list page, and nothing imported', async () => {
    const u = await t.user();
    const a = await signedInAgent(t.app, u.name, u.password);
    const big = `<opml version="2.0"><body>${'<outline xmlUrl="https://big.example/feed"/>'.repeat(110_000)}</body></opml>`;
    expect(big.length).toBeGreaterThan(4 * 1024 * 1024);
    const r = await a.agent.post('/web/opml').field('_csrf', a.csrf).attach('opml', Buffer.from(big), 'big.opml');
    expect(r.status).toBe(413);
    html(r);
    expect(r.text).toContain('That file is larger than this page takes (4 MiB).');
    expect(r.text).toContain('<h1>Subscriptions</h1>');
    expect(r.text).not.toContain('big.example');
  });

  test('an upload cut short or malformed: 400 as HTML with its page again, nothing logged as the server’s fault', async () => {
    const { logger, lines } = capturedLogger();
    const app = await testApp({}, logger);
    try {
      const u = await app.user();
      const a = await signedInAgent(app.app, u.name, u.password);
      const b = 'castsync-test-boundary';
      const part = (field: string) =>
        `--${b}\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${a.csrf}\r\n` +
        `--${b}\r\nContent-Disposition: form-data; name="${field}"; filename="f"\r\n\r\n{"format":`;
      const cases = [
        ['/web/import/archive', 'archive', '<h1>Import and export</h1>'],
        ['/web/import/gpodder-archive', 'archive', '<h1>Import and export</h1>'],
        ['/web/opml', 'opml', '<h1>Subscriptions</h1>'],
      ];
      for (const [path, field, heading] of cases) {
        // Cut short: the body ends inside the file, with no closing boundary.
        const cut = await a.agent
          .post(path!)
          .set('content-type', `multipart/form-data; boundary=${b}`)
          .send(part(field!));
        // Malformed: multipart without its boundary.
        const bare = await a.agent.post(path!).set('content-type', 'multipart/form-data').send('x');
        for (const r of [cut, bare]) {
          expect(r.status).toBe(400);
          html(r);
          expect(r.text).toContain(
            'That upload could not be read (cut short, or not a form this page sends): try again.',
          );
          expect(r.text).toContain(heading);
        }
      }
      expect(await app.db.query('SELECT 1 FROM imports WHERE user_id = $1', [u.id])).toHaveProperty('rowCount', 0);
      expect(lines.filter((l) => (l.level as number) >= 50)).toEqual([]);
    } finally {
      await app.close();
    }
  });

  test('a wrong password and too many of them: the sign-in page again, 401 then 429 with Retry-After', async () => {
    const u = await t.user();
    const agent = request.agent(t.app);
    const csrf = csrfOf((await agent.get('/')).text);
    const attempt = () =>
      agent.post('/web/sign-in').type('form').send({ _csrf: csrf, username: u.name, password: 'wrong-password' });
    for (let i = 0; i < 2; i++) {
      const r = await attempt();
      expect(r.status).toBe(401);
      html(r);
      expect(r.text).toContain('Wrong username or password.');
      expect(r.text).toContain(`value="${u.name}"`);
    }
    const blocked = await attempt();
    expect(blocked.status).toBe(429);
    html(blocked);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    expect(blocked.text).toMatch(/Too many failed sign-ins: try again in \d+ seconds\./);
  });

  test('an unknown page, a wrong method and a page for administrators only: 404, 405 and 403 as HTML', async () => {
    const u = await t.user();
    const a = await signedInAgent(t.app, u.name, u.password);
    const missing = await a.agent.get('/web/no-such-page');
    expect(missing.status).toBe(404);
    html(missing);
    const method = await a.agent.get('/web/sign-out');
    expect(method.status).toBe(405);
    html(method);
    const admin = await a.agent.get('/web/admin/users');
    expect(admin.status).toBe(403);
    html(admin);
    expect(admin.text).toContain('Only administrators may see this page');
  });

  test('a refused input on a form: 400 with the form again and the reason', async () => {
    const u = await t.user();
    const a = await signedInAgent(t.app, u.name, u.password);
    const r = await a.agent
      .post('/web/account/password')
      .type('form')
      .send({ _csrf: a.csrf, current: 'not-my-password', new: 'a-new-password' });
    expect(r.status).toBe(400);
    html(r);
    expect(r.text).toContain('The current password is wrong');
    expect(r.text).toContain('<h1>Account</h1>');
  });

  test("a fault of the server's own is a 500 page that tells nothing internal, logged once", async () => {
    const { logger, lines } = capturedLogger();
    const app = express();
    app.get('/web/boom', () => {
      throw new Error('secret internal detail at /srv/app.ts:12');
    });
    app.get('/web/refused', () => {
      throw new InvalidInput('That is not allowed here.');
    });
    app.use(pageErrors(logger));
    const r = await request(app).get('/web/boom');
    expect(r.status).toBe(500);
    html(r);
    expect(r.text).not.toMatch(/secret|srv/);
    expect(lines.filter((l) => l.level === 50)).toHaveLength(1);
    const refused = await request(app).get('/web/refused');
    expect(refused.status).toBe(400);
    html(refused);
    expect(refused.text).toContain('That is not allowed here.');
  });
});

/** Two refused attempts get 401 with this challenge, the third 429 with Retry-After (the limit is 2). */
async function refusedThenBlocked(attempt: () => Promise<request.Response>, challenge: string) {
  for (let i = 0; i < 2; i++) {
    const r = await attempt();
    expectError(r, 401, 'User not authorized');
    expect(r.headers['www-authenticate']).toBe(challenge);
  }
  const blocked = await attempt();
  expectError(blocked, 429, 'Too many requests');
  expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
}

describe('the APIs keep their own bodies', () => {
  test('/v1: an OPML upload over 4 MiB is 413 saying 4 MiB; a JSON body over 1 MiB says 1 MiB', async () => {
    const u = await t.user();
    const opml = await request(t.app)
      .post('/v1/subscriptions.opml')
      .set('Authorization', u.basic)
      .type('text/x-opml')
      .send('x'.repeat(5 * 1024 * 1024));
    expectError(opml, 413, 'Request body is larger than 4 MiB');
    const json = await request(t.app)
      .post('/v1/subscriptions')
      .set('Authorization', u.basic)
      .type('json')
      .send(`{"subscriptions":["${'x'.repeat(2 * 1024 * 1024)}"]}`);
    expectError(json, 413, 'Request body is larger than 1 MiB');
  });

  test('/v1: wrong credentials are 401 with the Bearer and Basic challenge, then 429 with Retry-After', async () => {
    const u = await t.user();
    const wrong = () => request(t.app).get('/v1/subscriptions').set('Authorization', basicOf(u.name, 'wrong-password'));
    await refusedThenBlocked(wrong, 'Bearer realm="castsync", Basic realm="castsync"');
  });

  test('gpodder: wrong credentials are 401 with the Basic challenge only, then 429; bad JSON is 400', async () => {
    const u = await t.user();
    const path = `/api/2/devices/${u.name}.json`;
    const wrong = () => request(t.app).get(path).set('Authorization', basicOf(u.name, 'wrong-password'));
    await refusedThenBlocked(wrong, 'Basic realm="castsync"');
    // Another user: this one is blocked for a while now.
    const v = await t.user();
    const bad = await request(t.app)
      .post(`/api/2/subscriptions/${v.name}/phone.json`)
      .set('Authorization', v.basic)
      .send('{"add": [');
    expectError(bad, 400, 'The body is not valid JSON');
    const big = await request(t.app)
      .post(`/api/2/subscriptions/${v.name}/phone.json`)
      .set('Authorization', v.basic)
      .type('json')
      .send(`{"add":["${'x'.repeat(5 * 1024 * 1024)}"]}`);
    expectError(big, 413, 'Request body is larger than 4 MiB');
  });

  test('gpodder: a file that is not OPML on the simple API is 400 saying so', async () => {
    const u = await t.user();
    const r = await request(t.app)
      .put(`/subscriptions/${u.name}/desk.opml`)
      .set('Authorization', u.basic)
      .send('hello');
    expectError(r, 400, /^not OPML: /);
  });
});
