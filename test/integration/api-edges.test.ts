import request from 'supertest';
import { expectError, testApp, type TestApp, type TestUser } from '../helpers/app';

// Edges of the API's input that the contracts answer (../shared/CONTRACT.md, ../shared/CONTRACT-gpodder.md)
// and that no broader test reaches: each one once answered differently.

let t: TestApp;
let u: TestUser;
beforeAll(async () => {
  t = await testApp({ AUTH_FAILURE_RATE_LIMIT: '100000' });
  u = await t.user('edges');
});
afterAll(() => t.close());

describe('a body whose Content-Encoding does not decode', () => {
  // JSON text labelled gzip or deflate: zlib refuses it before the JSON parser sees it.
  const corrupt = (path: string, encoding: string) =>
    request(t.app)
      .post(path)
      .set('Authorization', u.basic)
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', encoding)
      .send('{"subscriptions":[]}');

  test('/v1: 405, the body cannot be validated; never a 500', async () => {
    expectError(await corrupt('/v1/subscriptions', 'gzip'), 405, /^Input could not be validated/);
    expectError(await corrupt('/v1/subscriptions', 'deflate'), 405, /^Input could not be validated/);
  });

  test('gpodder and Nextcloud: 400; never a 500', async () => {
    expectError(await corrupt(`/api/2/subscriptions/${u.name}/phone.json`, 'gzip'), 400);
    expectError(await corrupt(`/api/2/episodes/${u.name}.json`, 'deflate'), 400);
    expectError(await corrupt('/index.php/apps/gpoddersync/subscription_change/create', 'gzip'), 400);
  });
});
