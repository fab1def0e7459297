import { PUSH_MAX_BYTES, pushBody, type Message } from '../../src/notifications/message';

// A push's JSON stays within what push services take, cutting what is least needed first.

const message = (title: string, body: string, artwork: string | null): Message => ({
  id: 'b:1:push:1',
  title,
  body,
  podcast: { title: 'P', feedUrl: 'https://p.example/feed', artwork },
  episodes: [{ id: '7', title: 't', page: '/web/episodes/7', enclosure: null }],
});
const size = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

test('a message that fits goes as it is', () => {
  const m = message('New episode of P', 'One\nTwo', 'https://p.example/a.jpg');
  expect(pushBody(m)).toEqual({
    title: 'New episode of P',
    body: 'One\nTwo',
    icon: 'https://p.example/a.jpg',
    url: '/web/episodes/7',
    tag: 'b:1:push:1',
  });
});

test('long titles are cut first, at whole characters, to fit', () => {
  const body = Array.from({ length: 5 }, (_, k) => `${k} ${'😀é\n'.repeat(400)}`).join('\n');
  const push = pushBody(message('5 new episodes of P', body, 'https://p.example/a.jpg'));
  expect(size(push)).toBeLessThanOrEqual(PUSH_MAX_BYTES);
  expect(size(push)).toBeGreaterThan(PUSH_MAX_BYTES - 10);
  expect(push.body.endsWith('…')).toBe(true);
  expect(body.startsWith(push.body.slice(0, -1))).toBe(true);
  expect(push.body).not.toMatch(/[\uD800-\uDBFF]…$/); // no half of a surrogate pair
  expect(push).toMatchObject({ title: '5 new episodes of P', icon: 'https://p.example/a.jpg' });
});

test('an artwork URL of half the room is left out; a title too long is cut last', () => {
  const art = `https://p.example/${'a'.repeat(3000)}.jpg`;
  const huge = pushBody(message('New episode of P', 'x'.repeat(100), art));
  expect(huge).toMatchObject({ title: 'New episode of P', body: 'x'.repeat(100), icon: null });
  const title = `New episode of ${'ü'.repeat(2000)}`;
  const push = pushBody(message(title, 'x'.repeat(3000), 'https://p.example/a.jpg'));
  expect(size(push)).toBeLessThanOrEqual(PUSH_MAX_BYTES);
  expect(push.body).toBe('');
  expect(push.icon).toBe('https://p.example/a.jpg');
  expect(push.title.startsWith('New episode of üü')).toBe(true);
  expect(push.title.endsWith('…')).toBe(true);
  expect(push.url).toBe('/web/episodes/7');
});
