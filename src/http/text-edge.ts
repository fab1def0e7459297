import type { RequestHandler } from 'express';
import { unstorableAt, UNSTORABLE_REASON } from '../text';

/** Where a string that cannot be stored was: the path, a query parameter or a form field (by name). */
export type RequestPart = { part: 'path' } | { part: 'query' | 'body'; name: string };

/**
 * Put first in a door: a request whose path or query (and, for a door of forms, whose parsed body) holds
 * text PostgreSQL cannot store (src/text.ts) is refused with the door's own error before any route reads
 * it, so that no handler can forget the rule. JSON bodies are the door's parsers' business: the app doors
 * skip such an item and apply the rest.
 */
export const storableInput =
  (refuse: (where: RequestPart, reason: string) => Error, { body = false } = {}): RequestHandler =>
  (req, _res, next) => {
    // A %00 anywhere in the path decodes to U+0000 in a path parameter. (Undecodable UTF-8 is the
    // router's own 400; percent-decoding valid UTF-8 never gives a lone surrogate.)
    if (/%00/.test(req.path)) throw refuse({ part: 'path' }, UNSTORABLE_REASON);
    const inQuery = unstorableAt(req.query);
    if (inQuery !== undefined) throw refuse({ part: 'query', name: inQuery.split('.')[0]! }, UNSTORABLE_REASON);
    const inBody = body && req.body !== undefined ? unstorableAt(req.body) : undefined;
    if (inBody !== undefined) throw refuse({ part: 'body', name: inBody.split('.')[0]! }, UNSTORABLE_REASON);
    next();
  };
