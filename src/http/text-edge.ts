import express, { type RequestHandler } from 'express';
import { InvalidInput } from '../errors';
import { tooDeep, TOO_DEEP_REASON, unstorableAt, UNSTORABLE_REASON } from '../text';

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

/**
 * Every door's JSON body parser: express.json with the door's options, and a body nested deeper than
 * src/text.ts allows refused as InvalidInput (each door's validation error) before any route, zod or
 * check walks it. JSON.parse reads any depth, but a walk by recursion would overflow the stack: a 500.
 */
export function jsonParser(options: Parameters<typeof express.json>[0]): RequestHandler {
  const parse = express.json(options);
  return (req, res, next) =>
    parse(req, res, (err?: unknown) => {
      if (err === undefined && tooDeep(req.body)) next(new InvalidInput(`The body is ${TOO_DEEP_REASON}`));
      else next(err);
    });
}
