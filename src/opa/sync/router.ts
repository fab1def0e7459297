import { isRefusal, type Refusal } from '../../errors';
import { Router, type ErrorRequestHandler, type Request } from 'express';
import { STATUS_CODES } from 'node:http';
import type { ApiContext } from '../../api-context';
import { currentUser } from '../../http/credentials';
import { notFound } from '../../http/error-handler';
import type { HttpError } from '../../http/errors';
import type { AuthLimits } from '../../http/limits';
import { route } from '../../http/method';
import { json, jsonBody, type Documenter } from '../../http/openapi';
import { authErrors, requireUser, secured } from '../auth';
import { BadRequest, opaError, urlRefused, ValidationFailed } from '../errors';
import { jsonParser, storableInput } from '../../http/text-edge';
import * as sync from '../../sync/service';
import { iso } from '../../timestamps';
import { echo, parseAction } from './parse';
import { present, presentChange, presentSubscription } from './present';
import * as query from './query';
import * as s from './schemas';

// The Open Podcast API's sync draft under /api/v1 (experimental, docs/opa-sync.md), beside /v1, with the
// same credentials.

/** The body's actions, each parsed on its own: the action, or why it is rejected. */
function actionsOf(body: unknown): { raw: unknown; parsed: sync.SyncAction | Refusal }[] {
  const requests = (body as { requests?: unknown } | undefined)?.requests;
  if (!Array.isArray(requests)) throw new BadRequest('Invalid body: expected {"requests": [actions]}');
  if (requests.length > sync.MAX_BATCH) throw new BadRequest(`At most ${sync.MAX_BATCH} actions in one request`);
  return requests.map((raw) => ({ raw, parsed: parseAction(raw) }));
}

async function postSync(ctx: ApiContext, req: Request) {
  const actions = actionsOf(req.body);
  const valid = actions.flatMap((a) => (isRefusal(a.parsed) ? [] : [a.parsed]));
  const outcomes = await sync.applyBatch(ctx.db, currentUser(req), query.clientId(req), valid, {
    maxFavourites: ctx.config.favouritesMax,
  });
  return {
    results: actions.map((a) => {
      if (isRefusal(a.parsed)) return { ...echo(a.raw), status: 'rejected' as const, reason: a.parsed.reason };
      return present(a.parsed, outcomes.shift()!);
    }),
  };
}

async function getSync(ctx: ApiContext, req: Request) {
  const include = query.include(req.query);
  const includeOwn = query.flag(req.query, 'include_own');
  const client = query.clientId(req);
  const since = query.since(req.query);
  const page = await sync.changes(ctx.db, currentUser(req), {
    since,
    limit: query.limit(req.query, 50),
    ownClient: includeOwn ? undefined : client,
    include: { subscriptions: include.has('subscription'), episodes: include.has('episode') },
  });
  return {
    results: page.changes.map((e) => presentChange(e, since === undefined)),
    has_more: page.hasMore,
    has_next: page.hasMore,
    next_since: query.link(ctx, req, '/api/v1/sync', { since: iso(page.nextSince) }),
    ...(page.previousSince !== undefined && {
      previous_since: query.link(ctx, req, '/api/v1/sync', {
        since: page.previousSince ? iso(page.previousSince) : undefined,
      }),
    }),
  };
}

async function getSubscriptions(ctx: ApiContext, req: Request) {
  const cursor = req.query.since;
  if (cursor !== undefined && (typeof cursor !== 'string' || !/^\d{1,15}$/.test(cursor)))
    throw new BadRequest('Invalid since: the cursor of a next_since link');
  const page = await sync.subscriptionsPage(ctx.db, currentUser(req), {
    after: cursor === undefined ? 0 : Number(cursor),
    includeUnsubscribed: query.flag(req.query, 'include_unsubscribed'),
    limit: query.limit(req.query, 30),
  });
  const more = page.next !== undefined;
  return {
    results: page.subscriptions.map(presentSubscription),
    has_more: more,
    has_next: more,
    ...(more && { next_since: query.link(ctx, req, '/api/v1/subscriptions', { since: String(page.next) }) }),
  };
}

/** The draft's error body (schema.yml's Error): the status's name, and the message. */
const draftErrorFields = (e: HttpError) => ({ error: STATUS_CODES[e.status] ?? 'Error', description: e.message });

/**
 * This door's errors are the OPA's, except that a body that cannot be read is a 400, as the draft says; the
 * body has both shapes, /v1's `{code, message}` and the draft's `{error, description}`.
 */
const syncErrors: ErrorRequestHandler = (err: unknown, _req, res, next) => {
  res.locals.errorFields = draftErrorFields;
  const mapped = opaError(err);
  next(mapped instanceof ValidationFailed ? new BadRequest(mapped.message) : (mapped ?? err));
};

export function opaSyncRouter(ctx: ApiContext, limits: AuthLimits): Router {
  const r = Router();
  r.use((_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    next();
  });
  r.use(storableInput(urlRefused));
  r.use(jsonParser({ limit: '1mb', type: () => true }));
  const user = [requireUser(ctx, limits.failedAuth)];
  route(
    r,
    '/sync',
    {
      get: async (req, res) => void res.json(await getSync(ctx, req)),
      post: async (req, res) => void res.json(await postSync(ctx, req)),
    },
    user,
  );
  route(r, '/subscriptions', { get: async (req, res) => void res.json(await getSubscriptions(ctx, req)) }, user);
  route(
    r,
    '/subscriptions/:sync_id',
    {
      get: async (req, res) => {
        const id = query.syncId(req.params.sync_id);
        res.json(presentSubscription(await sync.subscription(ctx.db, currentUser(req), id)));
      },
    },
    user,
  );
  r.use(notFound);
  r.use(syncErrors);
  return r;
}

const clientHeader = { headers: s.clientHeaders };

export const documentOpaSync: Documenter = (reg) => {
  const syncError = (description: string) => json(s.syncError, description);
  const common = {
    400: syncError('Bad parameter, body or Client-ID'),
    401: syncError(authErrors[401].description),
    429: syncError(authErrors[429].description),
  };
  reg.registerPath({
    method: 'post',
    path: '/api/v1/sync',
    summary: 'Apply a batch of up to 30 actions (experimental)',
    description: `${s.EXPERIMENTAL} Each action is applied, ignored (older than the entity's latest change) or rejected.`,
    security: secured,
    request: { ...jsonBody(s.syncRequest), ...clientHeader },
    responses: { 200: json(s.syncResponse, 'One result per action, in request order'), ...common },
  });
  reg.registerPath({
    method: 'get',
    path: '/api/v1/sync',
    summary: 'Changes since a time, paged (experimental)',
    description: `${s.EXPERIMENTAL} Changes by another app install than the Client-ID unless include_own.`,
    security: secured,
    request: { query: s.syncQuery, ...clientHeader },
    responses: { 200: json(s.syncPage, 'A page of changes in the order the server stamped them'), ...common },
  });
  reg.registerPath({
    method: 'get',
    path: '/api/v1/subscriptions',
    summary: 'The subscriptions, paged (experimental)',
    description: s.EXPERIMENTAL,
    security: secured,
    request: { query: s.subscriptionsQuery },
    responses: { 200: json(s.subscriptionsPage, 'A page of subscriptions in the order they were made'), ...common },
  });
  reg.registerPath({
    method: 'get',
    path: '/api/v1/subscriptions/{sync_id}',
    summary: 'One subscription by its sync_id (experimental)',
    description: s.EXPERIMENTAL,
    security: secured,
    request: { params: s.syncIdParams },
    responses: {
      200: json(s.syncSubscription, 'The subscription, subscribed or not'),
      ...common,
      404: syncError('No such subscription of this user'),
    },
  });
};
