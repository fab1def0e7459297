import request from 'supertest';
import type { Express } from 'express';

/** The form token of a page (every form of a page carries the same one). */
export function csrfOf(html: string): string {
  const m = /name="_csrf" value="([^"]*)"/.exec(html);
  if (!m) throw new Error(`no form token in the page:\n${html.slice(0, 500)}`);
  return m[1]!;
}

/** A browser-like agent (it keeps cookies) signed in to the web page as this user. */
export async function signedInAgent(app: Express, username: string, password: string) {
  const agent = request.agent(app);
  const page = await agent.get('/');
  const r = await agent
    .post('/web/sign-in')
    .type('form')
    .send({ _csrf: csrfOf(page.text), username, password });
  if (r.status !== 303) throw new Error(`sign-in failed: ${r.status}\n${r.text.slice(0, 500)}`);
  const cookie = (r.headers['set-cookie'] as unknown as string[])
    .find((c) => c.startsWith('castsync_web='))!
    .split(';')[0]!;
  const list = await agent.get('/web/subscriptions');
  return { agent, csrf: csrfOf(list.text), cookie };
}
