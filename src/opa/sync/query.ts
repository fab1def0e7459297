import type { Request } from 'express';
import type { ApiContext } from '../../api-context';
import { parseGuid } from '../../subscriptions/service';
import { parseTimestamp } from '../../timestamps';
import { BadRequest } from '../errors';

// The query parameters and headers of the sync endpoints, read leniently where the draft is loose.

const one = (q: Request['query'], name: string): string | undefined => {
  const v = q[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new BadRequest(`Invalid ${name}: give it once`);
  return v;
};

export function flag(q: Request['query'], name: string): boolean {
  const v = one(q, name);
  if (v === undefined || v === '') return false;
  if (/^(true|1)$/i.test(v)) return true;
  if (/^(false|0)$/i.test(v)) return false;
  throw new BadRequest(`Invalid ${name}: true or false`);
}

export function limit(q: Request['query'], fallback: number, max = 500): number {
  const v = one(q, 'limit');
  if (v === undefined) return fallback;
  if (!/^\d{1,9}$/.test(v) || Number(v) < 1) throw new BadRequest('Invalid limit: a whole number from 1');
  return Math.min(Number(v), max);
}

export function since(q: Request['query']): Date | undefined {
  const v = one(q, 'since');
  if (v === undefined || v === '') return undefined;
  const at = parseTimestamp(v);
  if (!at) throw new BadRequest('Invalid since: expected an RFC 3339 date-time such as 2026-07-11T15:30:00.1Z');
  return at;
}

/**
 * The entity types `include` names: any of all, subscription(s), episode(s), comma-separated or repeated;
 * all when it names none.
 */
export function include(q: Request['query']): Set<'subscription' | 'episode'> {
  const raw = q.include;
  const names = (Array.isArray(raw) ? raw : raw === undefined ? ['all'] : [raw]).flatMap((v) =>
    typeof v === 'string' ? v.split(',') : [''],
  );
  // Empty names are left out (`subscriptions,` names subscriptions); naming none at all means all.
  const named = names.map((x) => x.trim().toLowerCase()).filter((x) => x !== '');
  const out = new Set<'subscription' | 'episode'>();
  for (const n of named.length > 0 ? named : ['all']) {
    if (n === 'all') out.add('subscription').add('episode');
    else if (n === 'subscription' || n === 'subscriptions') out.add('subscription');
    else if (n === 'episode' || n === 'episodes') out.add('episode');
    else throw new BadRequest(`Invalid include: ${n.slice(0, 40)} (all, subscriptions, episodes)`);
  }
  return out;
}

/** The app install the request comes from (`Client-ID`, a UUID), if it says. */
export function clientId(req: Request): string | undefined {
  const v = req.headers['client-id'];
  if (v === undefined || v === '') return undefined;
  const id = typeof v === 'string' ? parseGuid(v.trim()) : undefined;
  if (!id) throw new BadRequest('Invalid Client-ID: a UUID');
  return id;
}

/** An absolute link to `path` with the request's parameters and these changed (PUBLIC_URL wins over the host). */
export function link(ctx: ApiContext, req: Request, path: string, set: Record<string, string | undefined>): string {
  const base = ctx.config.publicUrl ?? `${req.protocol}://${req.host}`;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(req.query)) if (typeof v === 'string' && !(k in set)) params.set(k, v);
  for (const [k, v] of Object.entries(set)) if (v !== undefined) params.set(k, v);
  const s = params.toString();
  return `${base}${path}${s ? `?${s}` : ''}`;
}

/** A sync_id in a path. */
export function syncId(v: unknown): string {
  const id = typeof v === 'string' ? parseGuid(v) : undefined;
  if (!id) throw new BadRequest('Invalid sync_id: not a UUID');
  return id;
}
