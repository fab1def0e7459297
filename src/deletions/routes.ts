import { Router } from 'express';
import { currentUser } from '../auth/middleware';
import type { Context } from '../context';
import { ValidationFailed } from '../http/errors';
import { route } from '../http/method';
import { deletionStatus } from './service';

export function deletionRoutes(ctx: Context): Router {
  const r = Router();
  route(r, '/deletions/:id', {
    get: async (req, res) => {
      const raw = String(req.params.id);
      if (!/^\d{1,15}$/.test(raw)) throw new ValidationFailed('the deletion id is not a whole number');
      const d = await deletionStatus(ctx, currentUser(req), Number(raw));
      res.json({ deletion_id: d.id, status: d.status, message: d.message });
    },
  });
  return r;
}
