import { Router, type Request, type Response } from 'express';
import multer from 'multer';
import type { ApiContext } from '../api-context';
import { InvalidInput } from '../errors';
import { currentUser } from '../http/credentials';
import { route } from '../http/method';
import { sendStreamed } from '../http/stream';
import * as transfer from '../transfer/service';
import { type ImportView, listImports, startImport } from '../transfer/service';
import { again, PageError } from './errors';
import { when } from './format';
import { formField } from './session';
import { render, type Notice } from './views';

const title = 'Import and export';

/** A step a person can read: "storing episode actions (5000 of 20000)". */
function describe(i: ImportView): string {
  const from =
    i.source === 'archive'
      ? 'an archive'
      : i.source === 'gpodder-archive'
        ? 'a gpodder.net archive'
        : `${i.remote_user} at ${i.server_url}`;
  return `${i.dry_run ? 'Preview of' : 'Import of'} ${from}`;
}

async function page(ctx: ApiContext, req: Request, res: Response, notices: Notice[] = []) {
  const imports = await listImports(ctx.db, currentUser(req));
  const started = Number(req.query.started);
  if (Number.isInteger(started) && imports.some((i) => i.id === started)) {
    notices.push({ kind: 'ok', text: 'Started: this page shows how far it is.' });
  }
  render(res, 'moving', {
    title,
    notices,
    imports,
    describe,
    when,
    running: imports.some((i) => i.state === 'queued' || i.state === 'running'),
    scripts: ['/static/imports.js'],
    form: {
      source: formField(req, 'source') ?? 'gpodder',
      serverUrl: formField(req, 'server_url') ?? '',
      remoteUser: formField(req, 'remote_user') ?? '',
    },
  });
}

/** The archive form's body parser (ahead of the form token check, which needs the body). */
export const archiveUpload = (ctx: ApiContext) => [
  again((req, res, notice) => page(ctx, req, res, [notice])),
  multer({
    storage: multer.memoryStorage(),
    limits: { fileSize: ctx.config.importMaxBytes, files: 1 },
  }).single('archive'),
];

const dryRunOf = (req: Request) => formField(req, 'action') === 'preview';

/** Downloading everything ("download my data"), and imports from another server or an archive, as jobs. */
export function movingRoutes(ctx: ApiContext): Router {
  const r = Router();
  route(r, '/web/moving', { get: (req, res) => page(ctx, req, res) });
  route(r, '/web/export', {
    get: async (req, res) => {
      const name = res.locals.account!.username;
      const at = new Date();
      const pieces = transfer.archivePieces(ctx.db, currentUser(req), name, at);
      // The devices and records are read before the status: an error until then is answered as any other.
      const head = await pieces.next();
      res.type('application/json; charset=utf-8').attachment(`castsync-${name}-${at.toISOString().slice(0, 10)}.json`);
      // Then a page of actions at a time, as they are read: a big history is never whole in memory.
      await sendStreamed(
        res,
        (async function* () {
          if (!head.done) yield head.value;
          yield* pieces;
        })(),
      );
    },
  });
  route(r, '/web/import', {
    post: [
      again((req, res, notice) => page(ctx, req, res, [notice])),
      async (req, res) => {
        const source = formField(req, 'source');
        if (source !== 'gpodder' && source !== 'nextcloud') throw new InvalidInput('Choose the kind of server.');
        const serverUrl = transfer.serverAddress(formField(req, 'server_url') ?? '');
        const remoteUser = (formField(req, 'remote_user') ?? '').trim();
        const password = formField(req, 'password') ?? '';
        if (remoteUser === '' || password === '') throw new InvalidInput('Give your name and password on that server.');
        const id = await startImport(
          ctx.db,
          currentUser(req),
          { source, serverUrl, remoteUser, password },
          dryRunOf(req),
        );
        res.redirect(303, `/web/moving?started=${id}`);
      },
    ],
  });
  route(r, '/web/import/archive', {
    post: async (req, res) => {
      if (!req.file) throw new PageError(400, 'Choose an archive file to import.');
      const document = req.file.buffer.toString('utf8');
      // A file that is not an archive is refused now, not in the job.
      transfer.parseArchive(document);
      const id = await startImport(ctx.db, currentUser(req), { source: 'archive', document }, dryRunOf(req));
      res.redirect(303, `/web/moving?started=${id}`);
    },
  });
  route(r, '/web/import/gpodder-archive', {
    post: async (req, res) => {
      if (!req.file) throw new PageError(400, 'Choose the archive file gpodder.net gave you.');
      // Read now (a file that is not an archive is refused at once); the job imports what it holds.
      const limits = { maxBytes: ctx.config.gpodderArchiveMaxBytes, maxEntries: ctx.config.gpodderArchiveMaxEntries };
      const snapshot = await transfer.readGpodderArchive([req.file.buffer], limits);
      const id = await startImport(ctx.db, currentUser(req), { source: 'gpodder-archive', snapshot }, dryRunOf(req));
      res.redirect(303, `/web/moving?started=${id}`);
    },
  });
  return r;
}
