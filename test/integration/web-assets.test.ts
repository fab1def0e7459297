import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { testApp, type TestApp } from '../helpers/app';

// The pages' own files: named at versioned addresses and kept by browsers for a year there, for an hour
// at their plain address; an icon named on every page, so that no browser asks for a missing /favicon.ico.

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

const STATIC = path.join(__dirname, '..', '..', 'src', 'web', 'static');
const digest = (name: string) =>
  createHash('sha256')
    .update(readFileSync(path.join(STATIC, name)))
    .digest('base64url')
    .slice(0, 12);

test("a page names its stylesheet, script and icon by their bytes' digest; there they are kept for a year", async () => {
  const page = await request(t.app).get('/').expect(200);
  const named = [...page.text.matchAll(/(?:src|href)="(\/static\/[^"]+)"/g)].map((m) => m[1]!);
  expect(named).toEqual([
    `/static/app.js?v=${digest('app.js')}`,
    `/static/style.css?v=${digest('style.css')}`,
    '/static/manifest.webmanifest',
    `/static/icon-192.png?v=${digest('icon-192.png')}`,
    `/static/icon-192.png?v=${digest('icon-192.png')}`,
  ]);
  expect(page.text).toMatch(/<link rel="icon" type="image\/png" sizes="192x192" href="\/static\/icon-192\.png\?v=/);
  for (const href of named.filter((h) => h.includes('?v='))) {
    const res = await request(t.app).get(href).expect(200);
    expect([href, res.headers['cache-control']]).toEqual([href, 'public, max-age=31536000, immutable']);
  }
});

test('at its plain address, or at a version that is not its own, a file is kept for an hour only', async () => {
  for (const href of [
    '/static/style.css',
    '/static/style.css?v=AAAAAAAAAAAA',
    `/static/app.js?v=${digest('style.css')}`,
  ]) {
    const res = await request(t.app).get(href).expect(200);
    expect([href, res.headers['cache-control']]).toEqual([href, 'public, max-age=3600']);
  }
});
