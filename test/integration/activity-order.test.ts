import { as, testApp, type TestApp } from '../helpers/app';
import { signedInAgent } from '../helpers/web';

// The activity page as a person reads it: the plays of one upload newest first, by their own time.

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

test("one upload's plays are listed by their own time, newest first, whatever their order in the batch", async () => {
  const u = await t.user('order');
  const play = (n: number, at: string) => ({
    podcast: 'https://order.example/feed.xml',
    episode: `https://order.example/${n}.mp3`,
    action: 'play',
    position: n * 10,
    timestamp: at,
  });
  await as(t, u).post(`/api/2/episodes/${u.name}.json`, [
    play(1, '2026-11-20T08:00:00'),
    play(3, '2026-11-22T08:00:00'),
    play(2, '2026-11-21T08:00:00'),
  ]);
  const { agent } = await signedInAgent(t.app, u.name, u.password);
  const page = (await agent.get('/web/activity')).text;
  const listed = [...page.matchAll(/https:\/\/order\.example\/(\d)\.mp3/g)].map((m) => m[1]);
  expect(listed).toEqual(['3', '2', '1']);
});
