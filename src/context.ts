import type { AuthCache } from './auth/cache';
import type { Config } from './config';
import type { Db } from './db/pool';
import type { Logger } from './logger';

/** What services need: passed as an argument, never imported as a global. */
export type Context = Readonly<{ db: Db; config: Config; logger: Logger; authCache: AuthCache }>;
