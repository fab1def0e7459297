import { hash } from 'node:crypto';

// Name-based UUIDs (RFC 9562 version 5): the same namespace and name give the same UUID, everywhere.

/** A variant digit with its two high bits set to 10, by the digit's value. */
const VARIANT = '89ab89ab89ab89ab';

/** The UUIDv5 of `name` (UTF-8) in `namespace` (16 bytes), in lower case. */
export function uuidV5(namespace: Buffer, name: string): string {
  const h = hash('sha1', Buffer.concat([namespace, Buffer.from(name, 'utf8')]), 'hex');
  // The first 128 bits in the 8-4-4-4-12 form, with version 5 and the RFC 9562 variant.
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${VARIANT[parseInt(h[16]!, 16)]}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
