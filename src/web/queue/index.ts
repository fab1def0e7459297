import { Router } from 'express';
import type { ApiContext } from '../../api-context';
import { addRoutes } from './add';
import { editRoutes } from './edit';
import { favouriteRoutes } from './favourites';
import { pageRoutes } from './page';

// Up next and favourites on the web page (docs/web.md): the buttons on every episode, the Up next page
// (reordered with buttons that work without script, dragged with it), the Favourites page. A file per page
// or group of forms, each registering its routes on the router it is given; marks.ts is what the pages that
// list episodes need of both.

export function queueRoutes(ctx: ApiContext): Router {
  const r = Router();
  pageRoutes(r, ctx);
  editRoutes(r, ctx);
  addRoutes(r, ctx);
  favouriteRoutes(r, ctx);
  return r;
}
