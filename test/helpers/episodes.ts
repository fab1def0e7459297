import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { TestApp, TestUser } from './app';

/** A download's pages read to the end (episodes.since): the JSON of its actions, and its read time. */
export async function readAll(pages: AsyncGenerator<string, Date, undefined>): Promise<{ json: string; readAt: Date }> {
  const read: string[] = [];
  for (;;) {
    const next = await pages.next();
    if (next.done) return { json: read.join(','), readAt: next.value };
    read.push(next.value);
  }
}

/** One episode action of the sync draft (`POST /api/v1/sync`) by the user, at the app's time `occurredAt`. */
export function syncEpisode(
  t: TestApp,
  u: TestUser,
  action: string,
  occurredAt: string,
  data: Record<string, unknown>,
): request.Test {
  return request(t.app)
    .post('/api/v1/sync')
    .set('Authorization', u.basic)
    .send({
      requests: [{ type: 'episode', action, action_id: randomUUID(), occurred_at: occurredAt, data }],
    });
}
