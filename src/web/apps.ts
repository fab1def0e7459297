import { Router } from 'express';
import type { ApiContext } from '../api-context';
import { route } from '../http/method';
import { render } from './views';

// "Connect an app": for each app people sync with, the exact fields to fill in, with this server's
// address and the person's name filled in (docs/apps.md says the same for readers of the docs).

export function appRoutes(ctx: ApiContext): Router {
  const r = Router();
  route(r, '/web/apps', {
    get: (req, res) => {
      // The address apps reach: PUBLIC_URL when set (never an unchecked Host then), else this request's.
      const server = ctx.config.publicUrl ?? `${req.protocol}://${req.host}`;
      render(res, 'apps', { title: 'Connect an app', server, host: server.replace(/^https?:\/\//, '') });
    },
  });
  return r;
}
