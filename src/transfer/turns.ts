import type { Db, Tx } from '../db/pool';
import { InvalidInput } from '../errors';
import * as repo from './repo';

// One import at a time per user (docs/moving.md): an import holds a job slot and reads another server for
// up to IMPORT_TOTAL_TIMEOUT, so a person cannot start a second one while the first is queued or running,
// on the web page or with the command line. The web page's imports are rows of `imports` until they end;
// the command line's run in its own process and hold an advisory lock of the user's meanwhile.

/** A second import of a user while one is queued or running. */
export class ImportUnderWay extends InvalidInput {
  constructor() {
    super('Another import into this account is queued or running: one at a time, so start this one when it is done.');
  }
}

/**
 * Within the transaction that queues an import: refused if the user has one queued or running, or one
 * from the command line. The transaction's lock makes two at once take turns (the second finds the first).
 */
export async function claimTurn(tx: Tx, userId: number): Promise<void> {
  if (!(await repo.tryLockImports(tx, userId, 'transaction'))) throw new ImportUnderWay();
  if (await repo.hasImportUnderWay(tx, userId)) throw new ImportUnderWay();
}

/**
 * Runs an import of the command line (`run`) as the user's only one: refused if the user has one queued
 * or running; while it runs, the user's lock, held on a connection of its own, refuses any other.
 */
export async function importAlone<T>(db: Db, userId: number, run: () => Promise<T>): Promise<T> {
  const client = await db.connect();
  let broken: Error | undefined;
  try {
    if (!(await repo.tryLockImports(client, userId, 'session'))) throw new ImportUnderWay();
    try {
      if (await repo.hasImportUnderWay(client, userId)) throw new ImportUnderWay();
      return await run();
    } finally {
      await repo.unlockImports(client, userId).catch((err: Error) => (broken = err));
    }
  } finally {
    client.release(broken);
  }
}
