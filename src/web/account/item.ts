import type { Request } from 'express';
import { PageError } from '../errors';

/** The id of the path's item (a session, an app password, a feed change): a positive integer, else a 404. */
export const idOf = (req: Request): number => {
  const id = Number(req.params.id);
  if (!Number.isSafeInteger(id) || id <= 0) throw new PageError(404, 'There is no such item.');
  return id;
};
