import type { ErrorRequestHandler } from 'express';
import { Deleted, InvalidInput, NotFound } from '../errors';
import { Gone, NotFound as HttpNotFound, ValidationFailed } from '../http/errors';

/** The Open Podcast API's answers to domain errors; anything else goes on to the app's error handler. */
export const opaErrors: ErrorRequestHandler = (err: unknown, _req, _res, next) => {
  if (err instanceof NotFound) return next(new HttpNotFound());
  if (err instanceof Deleted) return next(new Gone());
  if (err instanceof InvalidInput) return next(new ValidationFailed(err.reason));
  next(err);
};
