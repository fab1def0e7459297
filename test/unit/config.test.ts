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

  test('single sign-on is off by default, and passwords sign in', () => {
    expect(load({})).toMatchObject({
      passwordLogin: true,
      ssoCreateUsers: false,
      oidcIssuer: undefined,
      oidcScopes: 'openid profile',
      oidcUsernameClaim: 'preferred_username',
      oidcGroupsClaim: 'groups',
      oidcButtonLabel: 'Sign in with single sign-on',
      trustedAuthHeader: undefined,
      trustedProxies: [],
    });
  });

  test('TRUSTED_PROXIES takes addresses and ranges; the header name is matched in any case', () => {
    const c = load({ TRUSTED_AUTH_HEADER: 'Remote-User', TRUSTED_PROXIES: '10.0.0.0/8, 192.168.1.5,::1' });
    expect(c.trustedProxies).toEqual(['10.0.0.0/8', '192.168.1.5/32', '::1/128']);
    expect(c.trustedAuthHeader).toBe('remote-user');
  });

  test.each([
    [{ OIDC_ISSUER: 'https://id.example', PUBLIC_URL: 'https://sync.example' }, 'OIDC_CLIENT_ID'],
    [{ OIDC_ISSUER: 'https://id.example', OIDC_CLIENT_ID: 'castsync' }, 'OIDC_REDIRECT_URL'],
    [{ OIDC_ISSUER: 'ftp://id.example' }, 'OIDC_ISSUER'],
    [{ OIDC_SCOPES: 'profile email' }, 'OIDC_SCOPES'],
    [{ TRUSTED_AUTH_HEADER: 'Remote-User' }, 'TRUSTED_PROXIES'],
    [{ TRUSTED_AUTH_HEADER: 'Remote User', TRUSTED_PROXIES: '10.0.0.1' }, 'TRUSTED_AUTH_HEADER'],
    [{ TRUSTED_AUTH_HEADER: 'Remote-User', TRUSTED_PROXIES: '10.0.0.300' }, 'TRUSTED_PROXIES'],
    [{ PASSWORD_LOGIN: 'false' }, 'PASSWORD_LOGIN'],
    [{ DIRECTORY: 'podcastindex', PODCASTINDEX_KEY: 'k' }, 'PODCASTINDEX_KEY'],
    [{ DIRECTORY: 'gpodder.net' }, 'DIRECTORY'],
    [{ DIRECTORY_URL: 'ftp://mirror.example' }, 'DIRECTORY_URL'],
    [{ TOPLIST_MIN_SUBSCRIBERS: '0' }, 'TOPLIST_MIN_SUBSCRIBERS'],
    [
      { PASSWORD_LOGIN: 'false', TRUSTED_AUTH_HEADER: 'X-User', TRUSTED_PROXIES: '::1', ALLOW_REGISTRATION: 'true' },
      'ALLOW_REGISTRATION',
    ],
    [{ ARCHIVE_IDLE_AFTER_DAYS: '0', ARCHIVE_DIR: '/srv/archives' }, 'ARCHIVE_IDLE_AFTER_DAYS'],
    [{ EPISODE_HISTORY_RETENTION_DAYS: 'a year' }, 'EPISODE_HISTORY_RETENTION_DAYS'],
    [{ NOTIFY_VAPID_SUBJECT: 'https://' }, 'NOTIFY_VAPID_SUBJECT'],
    [{ NOTIFY_VAPID_SUBJECT: 'mailto:' }, 'NOTIFY_VAPID_SUBJECT'],
    [{ NOTIFY_VAPID_SUBJECT: 'mailto:admin' }, 'NOTIFY_VAPID_SUBJECT'],
    [{ NOTIFY_VAPID_SUBJECT: 'https://push admin.example' }, 'NOTIFY_VAPID_SUBJECT'],
    [{ NOTIFY_VAPID_SUBJECT: 'http://sync.example' }, 'NOTIFY_VAPID_SUBJECT'],
  ])('%j is refused, naming %s', (env, name) => {
    expect(() => load(env)).toThrow(new RegExp(`^Invalid ${name}`));
  });

  test.each(['mailto:admin@example.org', 'https://sync.example', 'https://sync.example/contact'])(
    'NOTIFY_VAPID_SUBJECT=%s is taken as it is',
    (subject) => {
      expect(load({ NOTIFY_VAPID_SUBJECT: subject }).notifyVapidSubject).toBe(subject);
    },
  );

  test('idle accounts are archived and old history removed only when asked to', () => {
    expect(load({})).toMatchObject({
      archiveIdleAfterDays: undefined,
      archiveDir: undefined,
      episodeHistoryRetentionDays: undefined,
    });
    const c = load({ ARCHIVE_IDLE_AFTER_DAYS: '365', ARCHIVE_DIR: 'archives', EPISODE_HISTORY_RETENTION_DAYS: '90' });
    expect(c).toMatchObject({ archiveIdleAfterDays: 365, episodeHistoryRetentionDays: 90 });
    expect(c.archiveDir).toMatch(/^\/.*\/archives$/);
    // The archives are kept in the database: a folder for their copies is not needed.
    expect(load({ ARCHIVE_IDLE_AFTER_DAYS: '365' })).toMatchObject({
      archiveIdleAfterDays: 365,
      archiveDir: undefined,
    });
  });

  test('OIDC with PUBLIC_URL needs no redirect URL of its own', () => {
    const c = load({
      OIDC_ISSUER: 'https://id.example/realms/home',
      OIDC_CLIENT_ID: 'castsync',
      PUBLIC_URL: 'https://s.example',
    });
    expect(c).toMatchObject({ oidcIssuer: 'https://id.example/realms/home', oidcClientId: 'castsync' });
  });
});
