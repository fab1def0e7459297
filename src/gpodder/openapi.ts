import type { Documenter } from '../http/openapi';
import { documentApi2 } from './api2';
import { documentDirectory } from './directory';
import { documentEpisodes } from './episodes';
import { documentNextcloud } from './nextcloud';
import { documentSimple } from './simple';

// The gpodder door's part of /openapi.json: each route file documents its routes beside them (docs.ts has
// what they share); the parity test (test/integration/service.test.ts) holds them to the routes served.

export const documentGpodder: Documenter = (r) => {
  r.registerComponent('securitySchemes', 'gpodderSession', {
    type: 'apiKey',
    in: 'cookie',
    name: 'sessionid',
    description: 'The session a gpodder login (or any Basic request without it) sets',
  });
  for (const document of [documentApi2, documentSimple, documentEpisodes, documentNextcloud, documentDirectory]) {
    document(r);
  }
};
