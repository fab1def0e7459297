import type { Config } from './config';
import type { Db } from './db/pool';
import type { Logger } from './logger';

/** What the process has for every part of it: passed as an argument, never imported as a global. */
export type Context = Readonly<{ db: Db; config: Config; logger: Logger }>;
