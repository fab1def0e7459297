import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config';
import { root } from '../helpers/tools';

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

describe('the settings as documented', () => {
  const defaults: Record<string, unknown> = load({});
  /** dbPoolMax -> DB_POOL_MAX: every variable the code reads, unset ones too, is a key of the settings. */
  const variable = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase();
  const keyOf = new Map(Object.keys(defaults).map((k) => [variable(k), k]));
  /** The setting that NAME=value makes. */
  const setting = (name: string, value: string) =>
    (load({ [name]: value }) as Record<string, unknown>)[keyOf.get(name)!];
  const read = (f: string) => readFileSync(path.join(root, f), 'utf8');

  // docs/configuration.md's tables: | `NAME` | default | example | meaning |
  const rows = [...read('docs/configuration.md').matchAll(/^\| `([A-Z_]+)` +\| ([^|]*?) +\|[^|]*\|([^|]*)\|$/gm)].map(
    ([, name, cell, meaning]) => ({ name: name!, cell: cell!, meaning: meaning! }),
  );

  test('docs/configuration.md lists every variable the code reads, once, and no other', () => {
    expect(rows.map((r) => r.name).sort()).toEqual([...keyOf.keys()].sort());
  });

  test.each(rows.map((r) => [r.name, r.cell] as const))(
    "docs/configuration.md's default of %s is the code's (%s)",
    (name, cell) => {
      const key = keyOf.get(name)!;
      const value = /^`([^`]*)`$/.exec(cell)?.[1];
      if (value !== undefined) expect(setting(name, value)).toEqual(defaults[key]);
      // unset, or made of other settings (OIDC_REDIRECT_URL): nothing of its own.
      else expect([undefined, []]).toContainEqual(defaults[key]);
    },
  );

  test.each(
    rows.flatMap((r) => {
      const m = /\((\d+) to (\d+)\)/.exec(r.meaning);
      return m ? [[r.name, Number(m[1]), Number(m[2])] as const] : [];
    }),
  )('%s takes %d to %d, as docs/configuration.md says', (name, min, max) => {
    for (const ok of [min, max]) expect(() => load({ [name]: String(ok) })).not.toThrow();
    for (const out of [min - 1, max + 1]) expect(() => load({ [name]: String(out) })).toThrow(ConfigError);
  });

  test('.env.example names every variable the code reads and no other; a value it sets is the default', () => {
    const lines = [...read('.env.example').matchAll(/^(# ?)?([A-Z][A-Z0-9_]*)=(.*)$/gm)];
    expect([...new Set(lines.map((m) => m[2]!))].sort()).toEqual([...keyOf.keys()].sort());
    for (const [, comment, name, value] of lines) {
      if (comment !== undefined) continue;
      expect({ name, value: setting(name!, value!) }).toEqual({ name, value: defaults[keyOf.get(name!)!] });
    }
  });

  test("the README's table names only variables the code reads", () => {
    const table = read('README.md').split('## Configure it')[1]!.split('\n## ')[0]!;
    const named = [...table.matchAll(/^\| (`[A-Z_]+`(?:, `[A-Z_]+`)*) +\|/gm)].flatMap((m) =>
      [...m[1]!.matchAll(/`([A-Z_]+)`/g)].map((n) => n[1]!),
    );
    expect(named.length).toBeGreaterThan(5);
    expect(named.filter((n) => !keyOf.has(n))).toEqual([]);
  });
});
