import express from 'express';
import request from 'supertest';
import { isDatabaseUnavailable } from '../../src/db/errors';
import { errorHandler } from '../../src/http/error-handler';
import { capturedLogger } from '../helpers/logs';

describe('database errors', () => {
  test.each([
    [{ code: 'ECONNREFUSED' }, true],
    [{ code: '57P01' }, true],
    [{ code: '08006' }, true],
    [{ code: '57014' }, true],
    [{ code: '53300' }, true],
    [new Error('timeout exceeded when trying to connect'), true],
    [new Error('Connection terminated unexpectedly'), true],
    [new Error('Query read timeout'), true],
    [{ code: '23505' }, false],
    [{ code: '42P01' }, false],
    [new Error('something else'), false],
    [undefined, false],
  ])('%o is unavailability: %s', (err, expected) => {
    expect(isDatabaseUnavailable(err)).toBe(expected);
  });
});

describe('the error handler', () => {
  const { logger, lines } = capturedLogger();
  const app = express();
  app.use((req, _res, next) => {
    req.id = 'req-1';
    next();
  });
  app.get('/boom', () => {
    throw new Error('secret internal detail: relation "users" at /srv/app.ts:12');
  });
  app.get('/down', () => {
    throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  });
  app.use(errorHandler(logger));

  test('an unexpected error is a 500 that says nothing internal, logged once with the request id', async () => {
    lines.length = 0;
    const r = await request(app).get('/boom');
    expect(r.status).toBe(500);
    expect(r.body).toEqual({ code: '500', message: 'Internal server error' });
    expect(r.text).not.toMatch(/secret|users|srv/);
    expect(lines.filter((l) => l.reqId === 'req-1' && l.level === 50)).toHaveLength(1);
  });

  test('a database that cannot be reached is a 503', async () => {
    const r = await request(app).get('/down');
    expect(r.body).toEqual({ code: '503', message: 'Service temporarily unavailable' });
  });
});
