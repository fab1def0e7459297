import { Router, type Request, type Response } from 'express';
import multer from 'multer';
import type { ApiContext } from '../api-context';
import { InvalidInput } from '../errors';
import { currentUser } from '../http/credentials';
import { route } from '../http/method';
import { sendStreamed } from '../http/stream';
import * as transfer from '../transfer/service';
import { type ImportView, listImports, startImport } from '../transfer/service';
import { again, PageError, uploadParser } from './errors';
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

/**
 * Keeps an uploaded file as the chunks it came in (at most IMPORT_MAX_BYTES), not copied into one buffer:
 * the request stores them for the import's job, which reads the file.
 */
const chunkStorage: multer.StorageEngine = {
  _handleFile(_req, file, cb) {
    const chunks: Buffer[] = [];
    let size = 0;
    file.stream.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
    });
    file.stream.on('error', cb);
    file.stream.on('end', () => cb(null, { size, chunks } as Partial<Express.Multer.File>));
  },
  _removeFile: (_req, _file, cb) => cb(null),
};

/** The uploaded file's chunks (chunkStorage), and its first bytes, for a look at what it is. */
function uploaded(req: Request, message: string): { chunks: Buffer[]; head: Buffer } {
  const chunks = (req.file as { chunks?: Buffer[] } | undefined)?.chunks;
  if (!chunks) throw new PageError(400, message);
  return { chunks, head: Buffer.concat(chunks.slice(0, 8)).subarray(0, 1024) };
}

/** The archive form's body parser (ahead of the form token check, which needs the body). */
export const archiveUpload = (ctx: ApiContext) => [
  again((req, res, notice) => page(ctx, req, res, [notice])),
  uploadParser(
    multer({ storage: chunkStorage, limits: { fileSize: ctx.config.importMaxBytes, files: 1 } }).single('archive'),
  ),
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
  // An uploaded file is only stored here, and the job reads it (it may be large, and expand far more):
  // what is plainly not an archive (its first bytes say) is refused at once.
  route(r, '/web/import/archive', {
    post: async (req, res) => {
      const { chunks, head } = uploaded(req, 'Choose an archive file to import.');
      transfer.checkArchiveStart(head);
      const id = await startImport(ctx.db, currentUser(req), { source: 'archive', upload: chunks }, dryRunOf(req));
      res.redirect(303, `/web/moving?started=${id}`);
    },
  });
  route(r, '/web/import/gpodder-archive', {
    post: async (req, res) => {
      const { chunks, head } = uploaded(req, 'Choose the archive file gpodder.net gave you.');
      transfer.checkGpodderArchiveStart(head);
      const from = { source: 'gpodder-archive' as const, upload: chunks };
      const id = await startImport(ctx.db, currentUser(req), from, dryRunOf(req));
      res.redirect(303, `/web/moving?started=${id}`);
    },
  });
  return r;
}
