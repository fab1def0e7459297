// A real OpenID provider on loopback for the sign-in tests: oidc-provider with its development login
// page (any login, any password; the login is the person's `sub`).
//
//   node test/helpers/oidc-provider.mjs PORT
//
// The client is read as JSON from OIDC_TEST_CLIENT, the people from OIDC_TEST_ACCOUNTS
// ({ sub: { preferred_username, groups } }). Prints "ready ISSUER" once it listens.
// POST /test/code-ttl?seconds=N changes how long an authorization code lives (default 60 s).
// POST /test/token?delay=MS&status=N makes the token endpoint wait MS before it answers, and answer N
// (an empty body) instead of a token; both 0 (the default) for the real answer at once.
import http from 'node:http';
import Provider from 'oidc-provider';

const port = Number(process.argv[2]);
const issuer = `http://127.0.0.1:${port}`;
const client = JSON.parse(process.env.OIDC_TEST_CLIENT ?? '{}');
const accounts = JSON.parse(process.env.OIDC_TEST_ACCOUNTS ?? '{}');
let codeTtl = 60;
let token = { delay: 0, status: 0 };

const provider = new Provider(issuer, {
  clients: [{ grant_types: ['authorization_code'], response_types: ['code'], ...client }],
  claims: { openid: ['sub'], profile: ['preferred_username', 'name'], groups: ['groups'] },
  scopes: ['openid', 'profile', 'groups'],
  findAccount: (_ctx, sub) =>
    accounts[sub] === undefined ? undefined : { accountId: sub, claims: () => ({ sub, ...accounts[sub] }) },
  ttl: { AuthorizationCode: () => codeTtl },
  cookies: { keys: ['a test provider only'] },
  features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
});
provider.on('server_error', (_ctx, err) => console.error('provider error', err));

const handle = provider.callback();
http
  .createServer((req, res) => {
    const url = new URL(req.url, issuer);
    if (req.method === 'POST' && url.pathname === '/test/code-ttl') {
      codeTtl = Number(url.searchParams.get('seconds'));
      return res.writeHead(204).end();
    }
    if (req.method === 'POST' && url.pathname === '/test/token') {
      token = {
        delay: Number(url.searchParams.get('delay') ?? 0),
        status: Number(url.searchParams.get('status') ?? 0),
      };
      return res.writeHead(204).end();
    }
    if (url.pathname === '/token' && (token.delay > 0 || token.status > 0)) {
      const { delay, status } = token;
      return void setTimeout(() => (status > 0 ? res.writeHead(status).end() : handle(req, res)), delay);
    }
    handle(req, res);
  })
  .listen(port, '127.0.0.1', () => console.log(`ready ${issuer}`));
