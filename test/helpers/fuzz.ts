import fc from 'fast-check';
import type { Db } from '../../src/db/pool';

// Requests derived from the server's own OpenAPI document (JSON Schema), and the hostile values a broken
// app or an attacker sends instead. Used by test/integration/fuzz-*.test.ts.

export type Schema = {
  $ref?: string;
  type?: string | string[];
  format?: string;
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  items?: Schema;
  prefixItems?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  minimum?: number;
  maximum?: number;
  maxLength?: number;
};
type Components = Record<string, Schema>;

export const NUL = '\u0000';
export const LONE_SURROGATE = 'a\ud800b';

/** Strings PostgreSQL cannot store, huge ones, and text that looks like other syntax. */
export const hostileString = fc.constantFrom(
  NUL,
  `https://x.example/${NUL}`,
  LONE_SURROGATE,
  '\udc00',
  'x'.repeat(70_000),
  '9'.repeat(400),
  '1e400',
  '-1',
  '',
  '../../etc/passwd',
  "' OR 1=1 --",
  '<script>alert(1)</script>',
  '%00',
);

/** Values of the wrong shape for anything: null, numbers at the edges, strings, empty containers. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  fc.constantFrom(null, true, 0, -1, 1e308, -1e308, 2 ** 64, Number.MAX_SAFE_INTEGER + 2, 0.5, [], {}, [null], [[]]),
);

/**
 * Values of a schema. With `broken`, any node may be a hostile value instead: mostly well-shaped requests
 * with one thing wrong somewhere, which reach deeper than a wholly wrong one.
 */
export function valuesOf(schema: Schema, components: Components, broken: boolean, depth = 0): fc.Arbitrary<unknown> {
  const good = shaped(schema, components, broken, depth);
  return broken ? fc.oneof({ weight: 5, arbitrary: good }, { weight: 1, arbitrary: hostileValue }) : good;
}

function shaped(schema: Schema, components: Components, broken: boolean, depth: number): fc.Arbitrary<unknown> {
  const next = (s: Schema) => valuesOf(s, components, broken, depth + 1);
  if (schema.$ref) return shaped(components[schema.$ref.split('/').pop()!] ?? {}, components, broken, depth);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const choices = schema.anyOf ?? schema.oneOf ?? schema.allOf;
  if (choices) return fc.oneof(...choices.map(next));
  const type = [schema.type ?? 'any'].flat().find((x) => x !== 'null');
  if (depth > 4) return fc.constant(null);
  switch (type) {
    case 'string':
      return stringOf(schema);
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1000, max: schema.maximum ?? 100_000 });
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 });
    case 'boolean':
      return fc.boolean();
    case 'array':
      if (schema.prefixItems) return fc.tuple(...schema.prefixItems.map(next));
      return fc.array(next(schema.items ?? {}), { maxLength: 4 });
    case 'object': {
      const props = Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, s]) => [k, next(s)]));
      return fc.record(props, { requiredKeys: (schema.required ?? []).filter((k) => k in props) });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function stringOf(schema: Schema): fc.Arbitrary<string> {
  switch (schema.format) {
    case 'uuid':
      return fc.uuid();
    case 'date-time':
      return fc
        .date({ min: new Date(0), max: new Date('2100-01-01'), noInvalidDate: true })
        .map((d) => d.toISOString());
    case 'uri':
      return fc.webUrl({ withQueryParameters: true });
    default:
      return fc.oneof(fc.string({ maxLength: Math.min(schema.maxLength ?? 40, 40) }), fc.webUrl());
  }
}

/** A path segment or query value as a client would put it in a URL; a lone surrogate as undecodable bytes. */
export function urlEncoded(v: string): string {
  try {
    return encodeURIComponent(v);
  } catch {
    return v.replace(/[\ud800-\udfff]/g, '%ED%A0%80').replace(/[^%\w]/g, (c) => encodeURIComponent(c));
  }
}

/** A body or page that gives away the server's insides: a stack frame, a source path, SQL. */
export const LEAKS = /\bat .+\(.+:\d+:\d+\)|node_modules|\/src\/.+\.(t|j)s\b|\bSELECT\b.+\bFROM\b|\bpg_/;

/** A digest of everything a user keeps (sign-in sessions and tokens aside): what a refused request must leave as it was. */
export async function userData(db: Db, userId: number): Promise<string> {
  const tables = await db.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.columns
      WHERE column_name = 'user_id' AND table_schema = current_schema()
        AND table_name NOT IN ('tokens', 'login_flows', 'user_identities', 'imports')`,
  );
  const parts = await Promise.all(
    tables.rows.map(({ table_name: name }) =>
      db.query<{ d: string }>(
        `SELECT '${name}:' || coalesce(md5(string_agg(x::text, '|' ORDER BY x::text)), '') AS d
           FROM ${name} x WHERE user_id = $1`,
        [userId],
      ),
    ),
  );
  const account = await db.query<{ d: string }>('SELECT md5(x::text) AS d FROM users x WHERE id = $1', [userId]);
  return [account.rows[0]?.d, ...parts.map((p) => p.rows[0]!.d)].join(' ');
}
