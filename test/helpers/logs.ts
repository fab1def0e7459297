import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/logger';

/** The app's own logger (redaction included), writing its JSON lines into `lines` for the test to read. */
export function capturedLogger(level = 'info'): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger(level, sink), lines };
}
