import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { inRanges } from '../addresses';
import { resolveHost, type ResolveHost } from './resolve';

/**
 * Which addresses the feed fetcher may connect to. By default only public unicast addresses: a server on
 * the internet must not become a way into the network it runs in (loopback, private, link-local, CGNAT,
 * unique-local, and every IPv6 form that embeds an IPv4 address are refused). Multicast, broadcast and
 * the unspecified address are never allowed: they name no feed server.
 */
export type AddressPolicy = { allowPrivate: boolean; allowCidrs: readonly string[] };

export const DEFAULT_POLICY: AddressPolicy = { allowPrivate: false, allowCidrs: [] };

const NEVER = new Set(['unspecified', 'multicast', 'broadcast']);

/** Why an address is refused, or undefined when the policy allows it. */
export function refusal(address: string, policy: AddressPolicy): string | undefined {
  if (!ipaddr.isValid(address)) return `not an IP address: ${address}`;
  // ::ffff:127.0.0.1 is 127.0.0.1.
  const ip = ipaddr.process(address);
  const range = ip.range();
  if (NEVER.has(range)) return `${range} address ${ip.toString()}`;
  if (range === 'unicast') return undefined;
  if (policy.allowPrivate || inRanges(address, policy.allowCidrs)) return undefined;
  return `${range} address ${ip.toString()}`;
}

/** A connection the policy refuses, before any byte is sent. */
export class ForbiddenAddress extends Error {
  readonly code = 'EFORBIDDEN_ADDRESS';
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void;

/** The family a lookup asks for: 4, 6, or 0 for both. */
const familyOf = ({ family }: dns.LookupOptions): number =>
  family === 'IPv4' ? 4 : family === 'IPv6' ? 6 : (family ?? 0);

/**
 * A `lookup` for net/http that resolves the host (resolve.ts) and hands the socket only addresses the
 * policy allows, so the connection goes to an address that was checked (a DNS answer that changes between
 * a check and the connect cannot slip through: there is only one lookup). An IP literal never reaches a
 * lookup; the fetcher checks it with `refusal` first. A request whose `signal` aborts stops its lookup.
 */
export function checkedLookup(
  policy: AddressPolicy,
  { signal, resolve = resolveHost }: { signal?: AbortSignal; resolve?: ResolveHost } = {},
) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    resolve(hostname, familyOf(options), { hints: options.hints ?? 0, signal }).then(
      (list) => {
        const allowed = list.filter((a) => refusal(a.address, policy) === undefined);
        if (allowed.length === 0) {
          const why = list.map((a) => refusal(a.address, policy)).join(', ');
          return callback(new ForbiddenAddress(`${hostname} resolves to a refused address (${why})`), '');
        }
        if (options.all) return callback(null, allowed);
        const first = allowed[0]!;
        callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
}

/** The host of a URL as an address when it is an IP literal ("[::1]" → "::1"), else undefined. */
export function literalAddress(hostname: string): string | undefined {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return net.isIP(bare) ? bare : undefined;
}
