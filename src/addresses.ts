import ipaddr from 'ipaddr.js';

/** Whether an IP address is in one of the CIDR ranges (as config.ts reads them); ::ffff:10.0.0.1 is 10.0.0.1. */
export function inRanges(address: string, cidrs: readonly string[]): boolean {
  if (!ipaddr.isValid(address)) return false;
  const ip = ipaddr.process(address);
  return cidrs.some((cidr) => {
    const [net, bits] = ipaddr.parseCIDR(cidr);
    return net.kind() === ip.kind() && ip.match([net, bits] as Parameters<typeof ip.match>[0]);
  });
}
