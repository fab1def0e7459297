import path from 'node:path';
import type { Response } from 'express';
import { Eta } from 'eta';
import { VERSION } from '../version';
import { artworkImage } from './artwork';
import { asset, WEB_DIR } from './assets';

/** eta: small, maintained, typed, escapes `<%= %>` output by default (docs/decisions/web-page.md). */
const eta = new Eta({ views: path.join(WEB_DIR, 'views'), cache: true, autoEscape: true });

/** A message shown at the top of a page: a success, or what went wrong. */
export type Notice = { kind: 'ok' | 'error'; text: string };

/** Renders a page inside the layout, with the signed-in user, the form token and the current section. */
export function render(res: Response, view: string, data: Record<string, unknown> & { title: string }): void {
  const html = eta.render(view, {
    account: res.locals.account,
    csrf: res.locals.csrf,
    section: view,
    version: VERSION,
    asset,
    thumb: artworkImage,
    notices: [],
    ...data,
  });
  res.type('html').set('Cache-Control', 'no-store').send(html);
}
