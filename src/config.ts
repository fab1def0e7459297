import path from 'node:path';
import dotenv from 'dotenv';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';

const port = z.coerce.number().int().min(0).max(65535);
const seconds = z.coerce.number().int().positive();
const flag = z.enum(['true', 'false']).transform((v) => v === 'true');

// A comma-separated list of CIDR ranges (10.0.0.0/8, fd00::/8), each checked by ipaddr.js.
const cidrList = z.string().transform((v, ctx) => {
  const ranges = v
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
  for (const r of ranges) {
    try {
      ipaddr.parseCIDR(r);
    } catch {
      ctx.addIssue({ code: 'custom', message: `not a CIDR range: ${r}` });
      return z.NEVER;
    }
  }
  return ranges;
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
  IMPORT_ALLOW_PRIVATE: flag.default(false),
  IMPORT_TIMEOUT: seconds.default(120),
  IMPORT_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(64 * 1024 * 1024),
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
  const r = schema.safeParse(source);
  if (!r.success) {
    const issue = r.error.issues[0];
    const name = String(issue?.path[0] ?? 'environment');
    throw new ConfigError(`Invalid ${name}: ${issue?.message ?? 'invalid value'}`);
  }
  // Every variable is a key, unset optional ones too.
  const settings = Object.keys(schema.shape).map((k) => [camelCase(k), r.data[k as keyof Env]]);
  return Object.freeze(Object.fromEntries(settings)) as Config;
}
