import { Router } from 'express';
import type { ApiContext } from '../api-context';
import * as directory from '../directory/service';
import { preview } from '../directory/service';
import { fetcherSettings } from '../feeds/service';
import { route } from '../http/method';
import { duration } from './format';
import { render } from './views';

/**
 * Finding podcasts: a search of the configured directory, a preview of a feed fetched now, and one click to
 * subscribe (the Subscriptions page's own form). A directory or feed that fails is a message on the page
 * (docs/directory.md).
 */
export function searchRoutes(ctx: ApiContext): Router {
  const r = Router();
  const settings = directory.directorySettings(ctx.config);
  const fetcher = fetcherSettings(ctx.config);
  const text = (value: unknown) => (typeof value === 'string' ? value.trim().slice(0, 2048) : '');

  route(r, '/web/search', {
    get: async (req, res) => {
      const q = text(req.query.q).slice(0, 200);
      const outcome = q && settings.provider ? await directory.search(settings, ctx.logger, q) : undefined;
      render(res, 'search', {
        title: 'Find podcasts',
        q,
        enabled: settings.provider !== undefined,
        found: outcome?.ok ? outcome.found : undefined,
        notices: outcome && !outcome.ok ? [{ kind: 'error', text: outcome.message }] : [],
      });
    },
  });
  route(r, '/web/search/preview', {
    get: async (req, res) => {
      const outcome = await preview(fetcher, ctx.logger, text(req.query.url));
      render(res, 'preview', {
        title: outcome.ok ? (outcome.feed.title ?? outcome.feed.url) : 'Preview',
        section: 'search',
        q: text(req.query.q).slice(0, 200),
        feed: outcome.ok ? outcome.feed : undefined,
        notices: outcome.ok ? [] : [{ kind: 'error', text: outcome.message }],
        duration,
      });
    },
  });
  return r;
}
