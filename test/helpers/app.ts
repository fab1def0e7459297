import request from 'supertest';
import type { Express } from 'express';
import pino from 'pino';
import { createApp, type AppState } from '../../src/app';
import { AuthCache } from '../../src/auth/cache';
import { addUser } from '../../src/auth/service';
import { loadConfig, type Config } from '../../src/config';
import { createPool, type Db } from '../../src/db/pool';
import { Foreground } from '../../src/jobs/foreground';
import { freshDatabase } from './db';

export type TestApp = {
  app: Express;
  db: Db;
  config: Config;
  url: string;
  state: AppState;
  authCache: AuthCache;
  /** Where the app counts its requests in flight. */
  foreground: Foreground;
  user: (prefix?: string) => Promise<TestUser>;
  close: () => Promise<void>;
};

export type TestUser = { id: number; name: string; password: string; basic: string };

let seq = 0;

/** createApp on a fresh database, with config from the given environment only. */
export async function testApp(env: Record<string, string> = {}, logger = pino({ level: 'silent' })): Promise<TestApp> {
  const database = await freshDatabase();
  const config = loadConfig({ ...env, DATABASE_URL: database.url }, { dotenvFile: false });
  const db = createPool(database.url, { max: 10, timeoutMs: 2000, logger });
  const state: AppState = { draining: false };
  const authCache = new AuthCache(config.authCacheTtl * 1000);
  const foreground = new Foreground();
  const app = createApp({ db, config, logger, state, authCache, foreground });
  return {
    app,
    db,
    config,
    url: database.url,
    state,
    authCache,
    foreground,
    user: async (prefix = 'user') => {
      const name = `${prefix}${++seq}`;
      const password = `pw-${name}-secret`;
      const id = await addUser({ db }, name, password);
      return { id, name, password, basic: 'Basic ' + Buffer.from(`${name}:${password}`).toString('base64') };
    },
    close: async () => {
      await db.end();
      await database.drop();
    },
  };
}

/** A supertest agent that sends the user's credentials on every request. */
export function as(t: TestApp, u: TestUser | string) {
  const authorization = typeof u === 'string' ? u : u.basic;
  return {
    get: (path: string) => request(t.app).get(path).set('Authorization', authorization),
    post: (path: string, body?: unknown) =>
      request(t.app)
        .post(path)
        .set('Authorization', authorization)
        .send(body as object),
    patch: (path: string, body?: unknown) =>
      request(t.app)
        .patch(path)
        .set('Authorization', authorization)
        .send(body as object),
    del: (path: string) => request(t.app).delete(path).set('Authorization', authorization),
    /** The body goes after any header: `.put(path).set('If-Match', tag).send(body)`. */
    put: (path: string) => request(t.app).put(path).set('Authorization', authorization),
  };
}

/** The contract's error body. */
export function expectError(res: request.Response, status: number, message?: RegExp | string): void {
  expect({ status: res.status, body: res.body }).toEqual({
    status,
    body: { code: String(status), message: expect.any(String) },
  });
  if (message instanceof RegExp) expect(res.body.message).toMatch(message);
  else if (message !== undefined) expect(res.body.message).toBe(message);
}

export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The sessionid a gpodder answer set, if any. */
export const sessionCookieOf = (res: request.Response): string | undefined =>
  ([res.headers['set-cookie']].flat().filter(Boolean) as string[])
    .map((c) => /^sessionid=([^;]*)/.exec(c)?.[1])
    .find((v) => v);

/**
 * AntennaPod's gpodder.net login: Basic, an empty body with its `plain/text` Content-Type, and the headers
 * given (its User-Agent, a cookie jar).
 */
export const antennaPodLogin = (t: TestApp, u: TestUser, headers: Record<string, string> = {}): request.Test =>
  request(t.app)
    .post(`/api/2/auth/${u.name}/login.json`)
    .set('Authorization', u.basic)
    .set(headers)
    .set('Content-Type', 'plain/text; charset=utf-8')
    .send('');
