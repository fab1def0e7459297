import path from 'node:path';
import dotenv from 'dotenv';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';

const port = z.coerce.number().int().min(0).max(65535);
const seconds = z.coerce.number().int().positive();
const flag = z.enum(['true', 'false']).transform((v) => v === 'true');

// A comma-separated list of addresses and CIDR ranges (10.0.0.0/8, fd00::/8, 192.168.1.5), each checked by
// ipaddr.js; an address is a range of one (192.168.1.5/32).
const cidrList = z.string().transform((v, ctx) => {
  const ranges = v
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
  const parsed: string[] = [];
  for (const r of ranges) {
    try {
      if (r.includes('/')) ipaddr.parseCIDR(r);
      const address = r.includes('/') ? undefined : ipaddr.parse(r);
      parsed.push(address ? `${address.toString()}/${address.kind() === 'ipv4' ? 32 : 128}` : r);
    } catch {
      ctx.addIssue({ code: 'custom', message: `not an address or a CIDR range: ${r}` });
      return z.NEVER;
    }
  }
  return parsed;
});

// TRUST_PROXY follows Express's "trust proxy": true/false, a hop count, or a list of addresses/subnets.
const trustProxy = z.string().transform((v): boolean | number | string => {
  if (v === 'true') return true;
  if (v === 'false' || v === '') return false;
  if (/^\d+$/.test(v)) return Number(v);
  return v;
});

const schema = z.object({
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional(),
  HOST: z.string().min(1).default('0.0.0.0'),
  PORT: port.default(8080),
  DATA_DIR: z
    .string()
    .min(1)
    .default('./data')
    .transform((v) => path.resolve(v)),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  TRUST_PROXY: trustProxy.default(false),
  PUBLIC_URL: z
    .url({ protocol: /^https?$/ })
    .transform((v) => v.replace(/\/+$/, ''))
    .optional(),
  ACCESS_TOKEN_TTL: seconds.default(3600),
  REFRESH_TOKEN_TTL: seconds.default(30 * 24 * 3600),
  DB_POOL_MAX: z.coerce.number().int().min(1).max(1000).default(10),
  DB_TIMEOUT_MS: z.coerce.number().int().positive().default(2000),
  AUTH_CACHE_TTL: z.coerce.number().int().min(0).default(60),
  LOGIN_RATE_LIMIT: z.coerce.number().int().positive().default(10),
  AUTH_FAILURE_RATE_LIMIT: z.coerce.number().int().positive().default(20),
  RATE_LIMIT_WINDOW: seconds.default(900),
  SHUTDOWN_TIMEOUT: seconds.default(10),
  // Answers compressed (gzip, brotli) for clients that accept it; false behind a proxy that compresses.
  COMPRESSION: flag.default(true),
  // Answers shorter than this go as they are: one TCP segment either way.
  COMPRESSION_MIN_BYTES: z.coerce.number().int().min(0).default(1400),
  // Set: GET /metrics answers only a request with `Authorization: Bearer <METRICS_TOKEN>`.
  METRICS_TOKEN: z.string().min(16, 'at least 16 characters (openssl rand -hex 32)').optional(),
  WORKER: flag.default(true),
  ALLOW_REGISTRATION: flag.default(false),
  FEED_FETCH: flag.default(true),
  FEED_FETCH_ALLOW_PRIVATE: flag.default(false),
  FEED_FETCH_ALLOW_CIDRS: cidrList.default([]),
  FEED_FETCH_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  FEED_FETCH_PER_HOST: z.coerce.number().int().min(1).max(16).default(2),
  FEED_FETCH_TIMEOUT: seconds.default(30),
  FEED_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(10 * 1024 * 1024),
  FEED_REFRESH_INTERVAL: seconds.default(24 * 3600),
  DIRECTORY: z.enum(['itunes', 'podcastindex', 'none']).default('itunes'),
  DIRECTORY_URL: z.url({ protocol: /^https?$/ }).optional(),
  DIRECTORY_TIMEOUT: seconds.default(10),
  PODCASTINDEX_KEY: z.string().optional(),
  PODCASTINDEX_SECRET: z.string().optional(),
  TOPLIST_MIN_SUBSCRIBERS: z.coerce.number().int().min(1).default(5),
  IMPORT_ALLOW_PRIVATE: flag.default(false),
  IMPORT_TIMEOUT: seconds.default(120),
  IMPORT_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(64 * 1024 * 1024),
  // The whole reading of another server in one import: every request, and every answer together.
  IMPORT_TOTAL_TIMEOUT: seconds.default(30 * 60),
  IMPORT_TOTAL_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(128 * 1024 * 1024),
  GPODDER_ARCHIVE_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(1024 * 1024 * 1024),
  GPODDER_ARCHIVE_MAX_ENTRIES: z.coerce.number().int().positive().default(2_000_000),
  GPODDER_ARCHIVE_MAX_MEMBER: z.coerce
    .number()
    .int()
    .positive()
    .default(256 * 1024 * 1024),
  GPODDER_ARCHIVE_MAX_RATIO: z.coerce.number().int().min(2).default(500),
  QUEUE_MAX_ITEMS: z.coerce.number().int().positive().default(1000),
  FAVOURITES_MAX: z.coerce.number().int().positive().default(10_000),
  // New-episode notifications (docs/notifications.md): at most this many messages a day per person.
  NOTIFY_DAILY_LIMIT: z.coerce.number().int().min(0).default(20),
  NOTIFY_TIMEOUT: seconds.default(15),
  // The VAPID "sub" claim push services may contact about this server: mailto: or https:; else PUBLIC_URL.
  // Checked whole, as web-push checks it at every message ("https://" alone would fail every one).
  NOTIFY_VAPID_SUBJECT: z
    .url({ protocol: /^(mailto|https)$/, error: 'must be a mailto: address or an https: URL' })
    .regex(/^(mailto:[^@\s]+@[^@\s]+|https:\/\/.+)$/, 'must be a mailto: address or an https: URL')
    .optional(),
  // Idle accounts and retention (docs/idle-accounts.md): off unless set.
  ARCHIVE_IDLE_AFTER_DAYS: z.coerce.number().int().positive().optional(),
  ARCHIVE_DIR: z
    .string()
    .min(1)
    .transform((v) => path.resolve(v))
    .optional(),
  EPISODE_HISTORY_RETENTION_DAYS: z.coerce.number().int().positive().optional(),
  PASSWORD_LOGIN: flag.default(true),
  SSO_CREATE_USERS: flag.default(false),
  OIDC_ISSUER: z.url({ protocol: /^https?$/ }).optional(),
  OIDC_CLIENT_ID: z.string().optional(),
  OIDC_CLIENT_SECRET: z.string().optional(),
  OIDC_REDIRECT_URL: z.url({ protocol: /^https?$/ }).optional(),
  OIDC_SCOPES: z
    .string()
    .regex(/(^|\s)openid(\s|$)/, 'must include openid')
    .default('openid profile'),
  OIDC_USERNAME_CLAIM: z.string().default('preferred_username'),
  OIDC_GROUPS_CLAIM: z.string().default('groups'),
  OIDC_ADMIN_GROUP: z.string().optional(),
  OIDC_BUTTON_LABEL: z.string().max(60).default('Sign in with single sign-on'),
  OIDC_TIMEOUT: seconds.default(10),
  TRUSTED_AUTH_HEADER: z
    .string()
    .regex(/^[A-Za-z0-9-]+$/, 'must be a header name, such as Remote-User')
    .transform((v) => v.toLowerCase())
    .optional(),
  TRUSTED_PROXIES: cidrList.default([]),
});

/** Settings that only make sense together. */
const combined = schema.superRefine((v, ctx) => {
  const need = (name: keyof typeof v, message: string) => ctx.addIssue({ code: 'custom', path: [name], message });
  if (v.OIDC_ISSUER !== undefined) {
    if (v.OIDC_CLIENT_ID === undefined) need('OIDC_CLIENT_ID', 'required with OIDC_ISSUER');
    if (v.OIDC_REDIRECT_URL === undefined && v.PUBLIC_URL === undefined) {
      need('OIDC_REDIRECT_URL', 'required with OIDC_ISSUER when PUBLIC_URL is not set');
    }
  }
  if (v.TRUSTED_AUTH_HEADER !== undefined && v.TRUSTED_PROXIES.length === 0) {
    need('TRUSTED_PROXIES', 'required with TRUSTED_AUTH_HEADER: the addresses of the proxies that set it');
  }
  if (!v.PASSWORD_LOGIN && v.OIDC_ISSUER === undefined && v.TRUSTED_AUTH_HEADER === undefined) {
    need('PASSWORD_LOGIN', 'false needs OIDC_ISSUER or TRUSTED_AUTH_HEADER, or nobody could sign in');
  }
  if (v.DIRECTORY === 'podcastindex' && (v.PODCASTINDEX_KEY === undefined || v.PODCASTINDEX_SECRET === undefined)) {
    need('PODCASTINDEX_KEY', 'PODCASTINDEX_KEY and PODCASTINDEX_SECRET are required with DIRECTORY=podcastindex');
  }
  if (!v.PASSWORD_LOGIN && v.ALLOW_REGISTRATION) {
    need('ALLOW_REGISTRATION', 'true needs PASSWORD_LOGIN (use SSO_CREATE_USERS with single sign-on)');
  }
});

type Env = z.output<typeof schema>;
/** DB_POOL_MAX -> dbPoolMax. */
type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Lowercase<Head>}${Capitalize<CamelCase<Tail>>}`
  : Lowercase<S>;
const camelCase = (name: string): string => name.toLowerCase().replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** The settings, named after their variables in camelCase: each variable is written once, in the schema. */
export type Config = Readonly<{ [K in keyof Env as CamelCase<K & string>]: Env[K] }>;

export class ConfigError extends Error {}

/** Parses the environment once; an invalid value throws a ConfigError naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, { dotenvFile = true } = {}): Config {
  const source = { ...env };
  if (dotenvFile) {
    const parsed = dotenv.config({ processEnv: {}, quiet: true }).parsed ?? {};
    for (const [k, v] of Object.entries(parsed)) source[k] ??= v;
  }
  // An empty variable counts as unset, as in most shells' `VAR= cmd`.
  for (const k of Object.keys(source)) if (source[k] === '') delete source[k];
  const r = combined.safeParse(source);
  if (!r.success) {
    const issue = r.error.issues[0];
    const name = String(issue?.path[0] ?? 'environment');
    throw new ConfigError(`Invalid ${name}: ${issue?.message ?? 'invalid value'}`);
  }
  // Every variable is a key, unset optional ones too.
  const settings = Object.keys(schema.shape).map((k) => [camelCase(k), r.data[k as keyof Env]]);
  return Object.freeze(Object.fromEntries(settings)) as Config;
}
