import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { documentGpodder } from './gpodder/openapi';
import { documentOps } from './http/ops';
import { documentOpa } from './opa/router';
import { documentOpaSync } from './opa/sync/router';

/** The OpenAPI 3.1 document, built from the zod schemas that validate the requests, router by router. */
export function openApiDocument(): object {
  const registry = new OpenAPIRegistry();
  for (const document of [documentOpa, documentOpaSync, documentGpodder, documentOps]) document(registry);
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'castsync',
      version: '0.1.0',
      description:
        'Podcast subscription sync server: the Open Podcast API subscriptions resource, the gpodder.net v2 API and the Nextcloud gpoddersync dialect.',
    },
  });
}
