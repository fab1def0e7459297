import fs from 'node:fs';
import type { Queryable } from '../db/pool';
import { InvalidInput } from '../errors';
import * as repo from './repo';

// A file uploaded to import is kept in the database (import_uploads) until its import ends, so that the
// request only stores it and whichever instance runs the job reads it, a piece at a time.

/** The size of the pieces a file is kept in: what one row holds, and what the job holds of it at once. */
export const UPLOAD_PIECE = 1024 * 1024;

/** Stores an uploaded file (its bytes as they came, in chunks of any size) in pieces of UPLOAD_PIECE. */
export async function storeUpload(tx: Queryable, userId: number, importId: number, chunks: Uint8Array[]) {
  let seq = 0;
  let piece: Uint8Array[] = [];
  let size = 0;
  const flush = async () => {
    await repo.insertUploadPiece(tx, userId, importId, seq++, Buffer.concat(piece));
    piece = [];
    size = 0;
  };
  for (const chunk of chunks) {
    for (let at = 0; at < chunk.length;) {
      const part = chunk.subarray(at, at + UPLOAD_PIECE - size);
      piece.push(part);
      size += part.length;
      at += part.length;
      if (size === UPLOAD_PIECE) await flush();
    }
  }
  if (size > 0 || seq === 0) await flush();
}

/** An uploaded file's bytes, read a piece at a time (each call reads it again from its start). */
export async function* uploadBytes(db: Queryable, userId: number, importId: number): AsyncGenerator<Uint8Array> {
  for (let seq = 0; ; seq++) {
    const piece = await repo.uploadPiece(db, userId, importId, seq);
    if (!piece) return;
    yield piece;
  }
}

/** A file's bytes as they stream; called again, it reads them again from the start. */
export type FileBytes = () => AsyncIterable<Uint8Array> | Iterable<Uint8Array>;

/** A file on this machine to import (the command line's), or why it cannot be read. */
export async function localFile(file: string): Promise<FileBytes> {
  try {
    await fs.promises.access(file, fs.constants.R_OK);
  } catch (err) {
    throw new InvalidInput(`Cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return () => fs.createReadStream(file);
}
