import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/logger';

/** The app's own logger (redaction included), writing its JSON lines into `lines` for the test to read. */
export function capturedLogger(level = 'info'): {
  logger: Logger;
  lines: Record<string, unknown>[];
  raw: string[];
} {
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) {
        raw.push(l);
        lines.push(JSON.parse(l) as Record<string, unknown>);
      }
      done();
    },
  });
  return { logger: createLogger(level, sink), lines, raw };
}

/**
 * JSON.parse, except that an object with the same key twice is an error (JSON.parse keeps the last one,
 * and log shippers differ in which one they keep).
 */
export function parseStrictJson(text: string): unknown {
  let i = 0;
  const ws = () => {
    while (/\s/.test(text[i] ?? '')) i++;
  };
  const string = (): string => {
    const start = i++;
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (): unknown => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const out: Record<string, unknown> = {};
      ws();
      if (text[i] === '}') return (i++, out);
      for (;;) {
        ws();
        const key = string();
        if (Object.hasOwn(out, key)) throw new Error(`duplicate key "${key}" in ${text}`);
        ws();
        i++; // :
        out[key] = value();
        ws();
        if (text[i++] === '}') return out;
      }
    }
    if (c === '[') {
      i++;
      const out: unknown[] = [];
      ws();
      if (text[i] === ']') return (i++, out);
      for (;;) {
        out.push(value());
        ws();
        if (text[i++] === ']') return out;
      }
    }
    if (c === '"') return string();
    const m = /^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i))!;
    i += m[0].length;
    return JSON.parse(m[0]) as unknown;
  };
  const v = value();
  ws();
  if (i !== text.length) throw new Error(`trailing text in ${text}`);
  return v;
}
