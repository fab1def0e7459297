import { spawn, type ChildProcess } from 'node:child_process';
import http, { type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

// Stoplight Prism's validation proxy (`prism proxy <schema> <upstream> --errors=false`) in front of castsync,
// one Prism per schema of the Open Podcast API (test/fixtures/opa-spec), with two small servers of ours:
//
//   client ─▶ front ─▶ Prism (main: /v1, subscriptions-redux: /api/v1) ─▶ back ─▶ castsync
//
// The front sends `/v1/…` to the `main` schema's Prism (whose paths are relative to the `/v1` root, so the
// front takes `/v1` off and Prism's upstream puts it back) and `/api/v1/…` to the `subscriptions-redux`
// schema's Prism (whose paths carry `/api/v1`). It reads Prism's `sl-violations` header off each answer,
// keeps it, and passes the answer on without it. The back hands each request Prism forwards to the
// castsync it names: an app in this process (`x-spec-proxy-app`, see `register`) or a server elsewhere
// (`x-spec-proxy-upstream`, an origin such as http://127.0.0.1:8080).

const APP_HEADER = 'x-spec-proxy-app';
const UPSTREAM_HEADER = 'x-spec-proxy-upstream';
const CANNED_HEADER = 'x-spec-proxy-canned';
const SCHEMAS = join(__dirname, '..', 'fixtures', 'opa-spec');

/** One of Prism's findings. */
export type Violation = { location: string[]; code: string | number; message: string; severity: string };

/** A request Prism checked, its answer, and what Prism found (the answer's JSON body when it found anything). */
export type Exchange = { method: string; path: string; status: number; violations: Violation[]; body?: unknown };

/** Which schema checks a path, and the path Prism is given. */
function route(path: string): { mount: Mount; path: string } | undefined {
  if (path === '/v1' || path.startsWith('/v1/') || path.startsWith('/v1?'))
    return { mount: 'main', path: path.slice('/v1'.length) || '/' };
  if (path.startsWith('/api/v1/') || path.startsWith('/api/v1?')) return { mount: 'redux', path };
  return undefined;
}
type Mount = 'main' | 'redux';

/** Whether a request of this path goes through Prism. */
export const checkedBySpec = (path: string): boolean => route(path) !== undefined;

async function listen(handler: RequestListener): Promise<{ server: http.Server; origin: string }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function freePort(): Promise<number> {
  const { server, origin } = await listen(() => undefined);
  await new Promise((resolve) => server.close(resolve));
  return Number(new URL(origin).port);
}

/**
 * Passes a request (its body read already, or else streamed) on to `target` and its answer back, letting
 * `onAnswer` see and change the answer's headers. Each answer closes its connection: a client never reuses
 * one that an early answer (a 413 to a body still being sent) left half-read.
 */
function forward(
  req: IncomingMessage,
  res: ServerResponse,
  to: { target: URL; headers: http.OutgoingHttpHeaders; body?: Buffer },
  onAnswer: (answer: IncomingMessage) => void = () => undefined,
): void {
  const headers = { ...to.headers, host: to.target.host };
  const out = http.request(to.target, { method: req.method, headers }, (answer) => {
    onAnswer(answer);
    delete answer.headers['keep-alive'];
    res.writeHead(answer.statusCode ?? 502, { ...answer.headers, connection: 'close' });
    answer.pipe(res);
  });
  out.on('error', (e) => {
    if (res.headersSent) return void res.destroy();
    res.writeHead(502, { 'content-type': 'text/plain', connection: 'close' });
    res.end(`spec proxy: ${e.message}`);
  });
  if (to.body) out.end(to.body);
  else req.pipe(out);
}

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A body said to be JSON that is not: Prism answers it itself (400), never asking castsync. */
function unreadableJson(req: IncomingMessage, body: Buffer): boolean {
  if (body.length === 0 || !/json/i.test(req.headers['content-type'] ?? '')) return false;
  try {
    JSON.parse(body.toString('utf8'));
    return false;
  } catch {
    return true;
  }
}

/**
 * Prism's header: a JSON list; past 8 KiB, "Too many violations! " and the list cut short: then the whole
 * findings, and `cut`.
 */
function parseViolations(header: string): { violations: Violation[]; cut: boolean } {
  const cut = /^Too many violations! (.*)$/s.exec(header);
  if (!cut) return { violations: JSON.parse(header), cut: false };
  const whole = cut[1]!.slice(0, cut[1]!.lastIndexOf('},{') + 1);
  return { violations: whole ? JSON.parse(`${whole}]`) : [], cut: true };
}

/** What stands for the findings Prism could not fit in its header. */
const UNREAD: Violation = {
  location: ['response', 'unread'],
  code: 'unread',
  message: "more findings than Prism's header holds",
  severity: 'Error',
};

async function startPrism(schema: string, upstream: string): Promise<{ child: ChildProcess; origin: string }> {
  const port = await freePort();
  const cli = require.resolve('@stoplight/prism-cli/dist/index.js');
  const args = [cli, 'proxy', join(SCHEMAS, schema, 'schema.yml'), upstream, '--errors=false'];
  const child = spawn(process.execPath, [...args, '-h', '127.0.0.1', '-p', String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  await new Promise<void>((resolve, reject) => {
    const seen = (d: Buffer) => {
      log = (log + d.toString()).slice(-5000);
      if (log.includes('Prism is listening')) resolve();
    };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
    child.on('exit', (code) => reject(new Error(`prism exited (${code}) before listening:\n${log}`)));
  });
  child.stdout!.resume();
  child.stderr!.resume();
  return { child, origin: `http://127.0.0.1:${port}` };
}

export type SpecProxy = {
  /** Where clients send their requests. */
  origin: string;
  /** Every request Prism checked, in the order of the answers. */
  exchanges: Exchange[];
  /** Resolves once every exchange so far is fully judged (see `rejudge`). */
  settled: () => Promise<unknown>;
  /** Names an app of this process: requests with the returned headers reach it. */
  register: (app: RequestListener) => Record<string, string>;
  /**
   * The `node` arguments and environment that send the fetch requests of a suite in another process
   * through the proxy, to the castsync server each was for (spec-proxy-fetch.mjs).
   */
  fetchThrough: () => { execArgv: string[]; env: Record<string, string> };
  stop: () => Promise<void>;
};

let active: SpecProxy | undefined;

/** The proxy started last and not yet stopped, if any. */
export const activeSpecProxy = (): SpecProxy | undefined => active;

/** Sends a request without a body and reads the answer's `sl-violations` header. */
function violationsOf(target: URL, method: string, headers: http.OutgoingHttpHeaders) {
  return new Promise<{ violations: Violation[]; cut: boolean }>((resolve, reject) => {
    const out = http.request(target, { method, headers: { ...headers, host: target.host } }, (answer) => {
      answer.resume();
      const found = answer.headers['sl-violations'];
      resolve(typeof found === 'string' ? parseViolations(found) : { violations: [], cut: false });
    });
    out.on('error', reject);
    out.end();
  });
}

type Canned = { status: number; headers: http.IncomingHttpHeaders; body: Buffer };

export async function startSpecProxy(): Promise<SpecProxy> {
  const apps: RequestListener[] = [];
  const ids = new Map<RequestListener, string>();
  const canned: Canned[] = [];
  const back = await listen((req, res) => {
    const answer = canned[Number(req.headers[CANNED_HEADER] ?? NaN)];
    if (answer) return void res.writeHead(answer.status, answer.headers).end(answer.body);
    const app = apps[Number(req.headers[APP_HEADER])];
    if (app) return void app(req, res);
    const origin = req.headers[UPSTREAM_HEADER];
    if (typeof origin !== 'string') {
      res.writeHead(500).end('spec proxy: the request names no castsync');
      return;
    }
    forward(req, res, { target: new URL(req.url!, origin), headers: req.headers });
  });
  const prisms: Record<Mount, { child: ChildProcess; origin: string }> = {
    main: await startPrism('main', `${back.origin}/v1`),
    redux: await startPrism('subscriptions-redux', back.origin),
  };
  const exchanges: Exchange[] = [];
  const pending: Promise<void>[] = [];

  /**
   * When Prism's header was cut, its findings on the answer are likely among those left out (it lists the
   * request's first). So the answer is judged again: the same request without its body, to an upstream
   * that gives back the very answer castsync gave; that request's body is then no finding's. Cut again, a
   * finding says that the rest went unread, and the answer does not pass.
   */
  const rejudge = async (exchange: Exchange, target: URL, req: IncomingMessage, answer: Canned) => {
    const headers = { ...req.headers, 'content-length': '0', [CANNED_HEADER]: String(canned.push(answer) - 1) };
    delete headers['transfer-encoding'];
    const again = await violationsOf(target, req.method!, headers);
    const ofAnswer = again.violations.filter((v) => v.location[0] === 'response');
    exchange.violations = [
      ...exchange.violations.filter((v) => v.location[0] !== 'response'),
      ...ofAnswer,
      ...(again.cut ? [UNREAD] : []),
    ];
  };

  const front = await listen(async (req, res) => {
    const to = route(req.url!);
    if (!to) {
      res.writeHead(500).end(`spec proxy: no schema checks ${req.url}`);
      return;
    }
    const body = await bodyOf(req);
    // Straight to castsync, unjudged: the spec cannot judge what cannot be read.
    if (unreadableJson(req, body))
      return void forward(req, res, { target: new URL(req.url!, back.origin), headers: req.headers, body });
    const target = new URL(to.path, prisms[to.mount].origin);
    forward(req, res, { target, headers: req.headers, body }, (answer) => {
      const found = answer.headers['sl-violations'];
      delete answer.headers['sl-violations'];
      const exchange: Exchange = { method: req.method!, path: req.url!, status: answer.statusCode!, violations: [] };
      exchanges.push(exchange);
      if (typeof found !== 'string') return;
      const { violations, cut } = parseViolations(found);
      exchange.violations = violations;
      const chunks: Buffer[] = [];
      answer.on('data', (c: Buffer) => chunks.push(c));
      const ended = new Promise<void>((resolve) => answer.on('end', resolve));
      const judged = ended.then(async () => {
        const raw = Buffer.concat(chunks);
        try {
          exchange.body = JSON.parse(raw.toString('utf8'));
        } catch {
          exchange.body = undefined;
        }
        if (cut) await rejudge(exchange, target, req, { status: exchange.status, headers: answer.headers, body: raw });
      });
      pending.push(judged);
    });
  });
  active = {
    origin: front.origin,
    exchanges,
    settled: () => Promise.all(pending),
    register: (app) => {
      if (!ids.has(app)) ids.set(app, String(apps.push(app) - 1));
      return { [APP_HEADER]: ids.get(app)! };
    },
    fetchThrough: () => ({
      execArgv: ['--import', pathToFileURL(join(__dirname, 'spec-proxy-fetch.mjs')).href],
      env: { SPEC_PROXY_ORIGIN: front.origin, SPEC_PROXY_UPSTREAM_HEADER: UPSTREAM_HEADER },
    }),
    stop: async () => {
      active = undefined;
      for (const { child } of Object.values(prisms)) if (child.exitCode === null) process.kill(child.pid!);
      for (const { server } of [front, back]) server.closeAllConnections();
      await Promise.all([front, back].map(({ server }) => new Promise((r) => server.close(r))));
    },
  };
  return active;
}
