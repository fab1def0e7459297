import pino from 'pino';

export type Logger = pino.Logger;

/** Credentials never reach the log: headers and any password or token field are redacted. */
const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.refresh_token',
  '*.access_token',
  '*.token',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, destination);
}
