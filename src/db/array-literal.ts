export type ArrayElement = string | number | boolean | null;

/**
 * A PostgreSQL array literal of these values, to send as one text parameter. pg builds the same literal
 * itself, but runs two regular-expression replaces over every string; here a string is only escaped when
 * it has a quote or a backslash, and numbers, booleans and NULL go as they are.
 */
export function arrayLiteral(values: readonly ArrayElement[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ',';
    const v = values[i]!;
    if (v === null) out += 'NULL';
    else if (typeof v === 'string') out += `"${v.includes('"') || v.includes('\\') ? v.replace(/["\\]/g, '\\$&') : v}"`;
    else if (typeof v === 'boolean') out += v ? 't' : 'f';
    else out += String(v);
  }
  return `${out}}`;
}
