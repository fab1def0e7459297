import { Router, type Request, type Response } from 'express';
import type { ApiContext } from '../api-context';
import { currentUser } from '../http/credentials';
import { route } from '../http/method';
import * as subscriptions from '../subscriptions/service';
import { again, PageError } from './errors';
import { when } from './format';
import { formField } from './session';
import { render, type Notice } from './views';

/** The duplicates of the user's list, side by side, and merging each group into the record a person keeps. */
export function duplicateRoutes(ctx: ApiContext): Router {
  const r = Router();
  const page = async (req: Request, res: Response, notices: Notice[] = []) => {
    const groups = await subscriptions.findDuplicates(ctx.db, currentUser(req));
    render(res, 'duplicates', { title: 'Duplicates', groups, notices, when });
  };
  route(r, '/web/duplicates', { get: (req, res) => page(req, res) });
  route(r, '/web/duplicates/merge', {
    post: [
      again((req, res, notice) => page(req, res, [notice])),
      async (req, res) => {
        const keep = formField(req, 'keep');
        const body = (req.body as Record<string, unknown>).merge;
        const merge = (Array.isArray(body) ? body : [body]).filter((g): g is string => typeof g === 'string');
        if (!keep || merge.length === 0) throw new PageError(400, 'Choose the record to keep from a group.');
        await subscriptions.mergeRecords(ctx.db, currentUser(req), keep, merge);
        await page(req, res, [{ kind: 'ok', text: `Merged ${merge.length} into one record.` }]);
      },
    ],
  });
  return r;
}
