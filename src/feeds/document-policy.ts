import { DEFAULT_POLICY, refusal, type AddressPolicy } from './address-policy';
import type { Answer } from './fetch';
import type { DocumentKind } from './documents-repo';
import { TRANSCRIPT_TYPES } from './transcripts';

// The rules an item's documents (chapters, transcripts) are fetched and served under, besides the feed
// fetcher's address policy, redirect limit and deadline: a document is read only when it is served as
// what it claims to be; a person is told that it could not be had, never why (the reason is logged);
// and a copy kept from an address is served only while the serving process's policy allows that
// address. docs/web.md, "Chapters and transcripts".

/** What a person is told of a document that could not be had: nothing of the network behind it. */
export const NOT_HAD = 'the document the feed names could not be fetched or read';

/** The media types each kind of document is read as: JSON Chapters' own type, and JSON's. */
export const DOCUMENT_TYPES: Record<DocumentKind, readonly string[]> = {
  chapters: ['application/json+chapters', 'application/json'],
  transcript: Object.keys(TRANSCRIPT_TYPES),
};

/** A Content-Type that says nothing of what a file is (or none at all). */
const GENERIC = new Set(['', 'application/octet-stream', 'binary/octet-stream']);

/** Whether the address is one any castsync may reach: public, allowed by the default policy. */
const isPublic = (address: string | undefined) =>
  address !== undefined && refusal(address, DEFAULT_POLICY) === undefined;

/**
 * Why an answer is not read as a `kind` document, or undefined when it is: its type must be one of the
 * kind's; a generic type, or none, is read only from a public address (file hosts and CDNs often serve
 * transcripts so), never from one only FEED_FETCH_ALLOW_PRIVATE or FEED_FETCH_ALLOW_CIDRS allow: there
 * a file must say it is a transcript or chapters before castsync reads it to anyone.
 */
export function answerRefusal(kind: DocumentKind, { type, address }: Answer): string | undefined {
  if (DOCUMENT_TYPES[kind].includes(type)) return undefined;
  if (GENERIC.has(type) && isPublic(address)) return undefined;
  const what = type === '' ? 'no type' : type;
  return GENERIC.has(type) ? `served as ${what} from a private address` : `served as ${what}, not as ${kind}`;
}

/**
 * Whether a copy kept from `address` comes from an address `policy` refuses: then this process does not
 * serve it (another process, with a wider policy, fetched it), whoever fetched it.
 */
export const keptFromRefused = (address: string | null, policy: AddressPolicy): boolean =>
  address !== null && refusal(address, policy) !== undefined;
