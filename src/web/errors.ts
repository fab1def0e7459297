import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { MulterError } from 'multer';
import {
  AccountArchived,
  CredentialsRefused,
  Deleted,
  InvalidInput,
  NotFound,
  SignInRefused,
  TooManyFailures,
} from '../errors';
import { HttpError, isUndecodablePath } from '../http/errors';
import { lastResort, noteRefused } from '../http/error-handler';
import type { RequestPart } from '../http/text-edge';
import type { Logger } from '../logger';
import { render, type Notice } from './views';

// The web page answers every error as a page, never as JSON: the status, and a message a person can act
// on, on the form they sent when a handler said how to show it again (`again`), else on a page of its own.

/** A page's refusal: shown with this status and message. */
export class PageError extends HttpError {}

/** Shows the page of a form again, with a notice of what went wrong. */
export type ShowAgain = (req: Request, res: Response, notice: Notice) => unknown;

declare module 'express-serve-static-core' {
  interface Locals {
    again?: ShowAgain;
  }
}

/** Put ahead of a form's handler (and its body parser): how an error shows that form again, once posted. */
export const again =
  (show: ShowAgain): RequestHandler =>
  (req, res, next) => {
    // The error handler runs outside the route, where the request has lost the route's parameters (the
    // user a form names in its path): the form is shown again with those it was posted to.
    const { params } = req;
    if (req.method === 'POST') res.locals.again = (r, s, notice) => show(Object.assign(r, { params }), s, notice);
    next();
  };

/**
 * A file form's body parser (multer), whose failure to read the request is the sender's: an upload cut
 * short, a malformed or boundless multipart body. multer hands on the parser's plain Error for those (its
 * own MulterError is for the limits, mapped below), which would otherwise be a 500 logged as the server's.
 */
export const uploadParser =
  (parse: RequestHandler): RequestHandler =>
  (req, res, next) =>
    parse(req, res, (err?: unknown) =>
      next(
        err === undefined || err === 'route' || err === 'router' || err instanceof MulterError
          ? err
          : new PageError(400, 'That upload could not be read (cut short, or not a form this page sends): try again.'),
      ),
    );

/** A form field or an address holding text that cannot be stored: the form again, saying which. */
export const inputRefused = (where: RequestPart): PageError =>
  new PageError(
    400,
    where.part === 'path'
      ? 'This address holds a character that cannot be stored (U+0000): check the link.'
      : `"${where.name}" holds a character that cannot be stored (U+0000 or a lone surrogate): remove it and try again.`,
  );

/** The status and message a person sees, and a header the status needs; undefined: for the safety net. */
function pageError(err: unknown): HttpError | undefined {
  if (err instanceof HttpError) return err;
  if (err instanceof NotFound) return new HttpError(404, 'There is no such page, or it is not yours.');
  if (err instanceof Deleted) return new HttpError(410, 'This feed was deleted.');
  if (err instanceof InvalidInput) return new HttpError(400, err.reason);
  if (err instanceof CredentialsRefused) return new HttpError(401, 'Wrong username or password.');
  if (err instanceof SignInRefused || err instanceof AccountArchived) return new HttpError(403, err.reason);
  if (err instanceof TooManyFailures) {
    return new HttpError(429, `Too many failed sign-ins: try again in ${err.retryAfter} seconds.`, {
      'Retry-After': String(err.retryAfter),
    });
  }
  if (isUndecodablePath(err)) return new HttpError(400, 'This address is not valid: check the link.');
  if (err instanceof MulterError) {
    const limit =
      err.field === 'archive'
        ? ': the administrator can raise IMPORT_MAX_BYTES, or import it with the command line.'
        : ' (4 MiB).';
    return err.code === 'LIMIT_FILE_SIZE'
      ? new HttpError(413, `That file is larger than this page takes${limit}`)
      : new HttpError(400, 'That upload is not what this form sends: choose one file and try again.');
  }
  const type = (err as { type?: unknown }).type;
  if (type === 'entity.too.large') return new HttpError(413, 'That form is larger than this page takes.');
  if (typeof type === 'string' && /^(entity\.parse|encoding|charset|request|stream)\./.test(type)) {
    return new HttpError(400, 'That form could not be read: go back, reload the page and try again.');
  }
  return undefined;
}

/** The paths whose errors are pages: the sign-in page, everything under /web, the login flow's page. */
const isPage = (path: string) => path === '/' || /^\/(web|login\/flow)(\/|$)/.test(path);

/** The web door's one mapping, for its own paths; errors of other paths go on. */
export function pageErrors(logger: Logger): ErrorRequestHandler {
  return async (err: unknown, req, res, next) => {
    if (!isPage(req.path)) return next(err);
    const e =
      pageError(err) ??
      lastResort(logger, err, req, res, 'Something went wrong on the server. It is logged; try again later.');
    noteRefused(logger, e, req, res);
    if (res.headersSent) return void res.destroy();
    res.status(e.status).set(e.headers);
    if (e.status < 500 && res.locals.again) {
      try {
        return void (await res.locals.again(req, res, { kind: 'error', text: e.message }));
      } catch (failed) {
        logger.warn({ err: failed }, 'could not show the form again: showing the error alone');
      }
    }
    render(res, 'error', { title: e.status === 403 ? 'Not allowed' : 'Something is wrong', message: e.message });
  };
}
