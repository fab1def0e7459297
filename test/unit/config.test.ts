import { ConfigError, loadConfig } from '../../src/config';

const load = (env: Record<string, string>) => loadConfig(env, { dotenvFile: false });

describe('configuration', () => {
  test('defaults', () => {
    const c = load({});
    expect(c).toMatchObject({
      databaseUrl: undefined,
      host: '0.0.0.0',
      port: 8080,
      logLevel: 'info',
      trustProxy: false,
      accessTokenTtl: 3600,
      refreshTokenTtl: 2592000,
      worker: true,
    });
    expect(c.dataDir).toMatch(/\/data$/);
    expect(Object.isFrozen(c)).toBe(true);
  });

  test.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://localhost/x'],
    ['LOG_LEVEL', 'loud'],
    ['PUBLIC_URL', 'not a url'],
    ['ACCESS_TOKEN_TTL', '-5'],
    ['REFRESH_TOKEN_TTL', 'soon'],
    ['WORKER', 'maybe'],
  ])('an invalid %s stops the start with a message naming it', (name, value) => {
    expect(() => load({ [name]: value })).toThrow(ConfigError);
    expect(() => load({ [name]: value })).toThrow(new RegExp(`^Invalid ${name}`));
  });

  test.each([
    ['true', true],
    ['false', false],
    ['2', 2],
    ['loopback, 10.0.0.0/8', 'loopback, 10.0.0.0/8'],
  ])('TRUST_PROXY=%s', (value, expected) => {
    expect(load({ TRUST_PROXY: value }).trustProxy).toEqual(expected);
  });

  test('PUBLIC_URL loses its trailing slash', () => {
    expect(load({ PUBLIC_URL: 'https://sync.example.org/castsync/' }).publicUrl).toBe(
      'https://sync.example.org/castsync',
    );
  });
});
