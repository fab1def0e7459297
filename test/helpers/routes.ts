import type { Express } from 'express';

type Layer = {
  rawPath?: string;
  route?: { path: string; methods: Record<string, boolean> };
  handle: { stack?: Layer[] };
  name: string;
};

/** Every route the app serves, from Express's own routing table: `post /v1/subscriptions/{guid}`. */
export function servedRoutes(app: Express): string[] {
  const out: string[] = [];
  const walk = (stack: Layer[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        const path = `${prefix}${layer.route.path}`.replace(/:(\w+)/g, '{$1}');
        for (const m of Object.keys(layer.route.methods)) if (m !== '_all') out.push(`${m} ${path}`);
      } else if (layer.name === 'router' && layer.handle.stack) {
        walk(layer.handle.stack, prefix + (layer.rawPath === '/' ? '' : (layer.rawPath ?? '')));
      }
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack, '');
  return out;
}
