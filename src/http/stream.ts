import type { Response } from 'express';
import { pipeline } from 'node:stream/promises';

/**
 * Sends a body piece by piece as `pieces` yields them (status and headers as set on `res`), taking the
 * next piece only when the client has taken the last (backpressure), so that a large answer is never
 * whole in memory. The body goes chunked, without a length: an error after the first piece can no longer
 * be answered, so the connection is destroyed and the client sees a broken answer, never a short one that
 * looks whole (the error goes on to be logged). A client that goes away stops the pieces: their generator
 * is closed (`return()`), and nothing is logged.
 */
export async function sendStreamed(res: Response, pieces: AsyncIterable<string>): Promise<void> {
  try {
    await pipeline(pieces, res);
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ERR_STREAM_PREMATURE_CLOSE') return;
    throw err;
  }
}
