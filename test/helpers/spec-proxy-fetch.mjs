// Loaded with `node --import` into a suite that talks to castsync with fetch (the contract's conformance
// suite, run by test/integration/opa-spec-schema.test.ts): its /v1 and /api/v1 requests go to the spec
// proxy (test/helpers/spec-proxy.ts) instead, naming the castsync they were for; every other request is
// left alone.
const proxy = process.env.SPEC_PROXY_ORIGIN;
const upstreamHeader = process.env.SPEC_PROXY_UPSTREAM_HEADER;
const fetchDirect = globalThis.fetch;

globalThis.fetch = (input, init = {}) => {
  if (!proxy || !(typeof input === 'string' || input instanceof URL)) return fetchDirect(input, init);
  const url = new URL(input);
  if (!/^\/(v1|api\/v1)(\/|$)/.test(url.pathname)) return fetchDirect(input, init);
  const headers = new Headers(init.headers);
  headers.set(upstreamHeader, url.origin);
  return fetchDirect(`${proxy}${url.pathname}${url.search}`, { ...init, headers });
};
