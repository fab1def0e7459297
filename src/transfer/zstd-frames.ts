import { InvalidInput } from '../errors';

// fzstd allocates, at the start of every zstd frame, the window its header asks for (up to 2 GiB) and
// copies it whole at every block: a forged header in any frame of a small file could take the memory.
// This walks the frames' headers and block headers (RFC 8878, 3.1) ahead of the decoder, without
// decoding anything, and refuses a window larger than the zstd tool decodes by default.

/** The largest window the zstd tool decodes without being told to (--memory): 128 MiB. */
export const MAX_WINDOW = 128 * 1024 * 1024;

const SKIPPABLE = 0x184d2a5;
const TOO_MUCH = 'Not a gpodder.net archive: a zstd frame of it asks for too much memory (over 128 MiB of window)';

const u32 = (b: number[], at: number) => (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16)) + b[at + 3]! * 2 ** 24;
const isZstdMagic = (b: number[]) => b[0] === 0x28 && b[1] === 0xb5 && b[2] === 0x2f && b[3] === 0xfd;

/** The window a frame header asks the decoder to hold: the window descriptor, or the content size. */
export function frameWindow(b: ArrayLike<number>): number | undefined {
  const descriptor = b[4];
  if (descriptor === undefined) return undefined;
  if (!((descriptor >> 5) & 1)) {
    const w = b[5];
    if (w === undefined) return undefined;
    const base = 2 ** (10 + (w >> 3));
    return base + (base / 8) * (w & 7);
  }
  // A single segment: the window is the content size, after the dictionary id.
  const at = 5 + [0, 1, 2, 4][descriptor & 3]!;
  const sizeBytes = [1, 2, 4, 8][descriptor >> 6]!;
  if (b.length < at + sizeBytes) return undefined;
  let size = 0;
  for (let i = sizeBytes - 1; i >= 0; i--) size = size * 256 + b[at + i]!;
  return sizeBytes === 2 ? size + 256 : size;
}

/** A frame header's length once enough of it is known (5 bytes), and whether the frame ends with a checksum. */
function frameHeader(b: number[]): { length: number; checksum: boolean } | undefined {
  if (b.length < 5) return undefined;
  const d = b[4]!;
  const single = (d >> 5) & 1;
  const sizeBytes = [single, 2, 4, 8][d >> 6]!;
  return { length: 5 + (single ? 0 : 1) + [0, 1, 2, 4][d & 3]! + sizeBytes, checksum: ((d >> 2) & 1) === 1 };
}

/**
 * A checker to call with each compressed chunk before the decoder gets it: it throws an ImportFailed when
 * a frame asks for a window over MAX_WINDOW. What it cannot read (a wrong magic, a reserved block type)
 * it leaves to the decoder, which refuses it.
 */
export function windowGuard(): (chunk: Uint8Array) => void {
  let header: number[] = [];
  let skip = 0;
  let inBlocks = false;
  let checksum = false;
  const step = () => {
    if (inBlocks) {
      if (header.length < 3) return;
      const v = header[0]! | (header[1]! << 8) | (header[2]! << 16);
      const type = (v >> 1) & 3;
      skip = type === 1 ? 1 : v >>> 3;
      if (v & 1) {
        inBlocks = false;
        skip += checksum ? 4 : 0;
      }
    } else if (header.length >= 4 && u32(header, 0) >>> 4 === SKIPPABLE) {
      if (header.length < 8) return;
      skip = u32(header, 4);
    } else if (header.length >= 4 && !isZstdMagic(header)) {
      throw new InvalidInput('Not a gpodder.net archive: its zstd data is not zstd frames');
    } else {
      const h = frameHeader(header);
      if (!h || header.length < h.length) return;
      const window = frameWindow(header);
      if (window === undefined || window > MAX_WINDOW) throw new InvalidInput(TOO_MUCH);
      inBlocks = true;
      checksum = h.checksum;
    }
    header = [];
  };
  return (chunk) => {
    let at = 0;
    while (at < chunk.length) {
      if (skip > 0) {
        const n = Math.min(skip, chunk.length - at);
        skip -= n;
        at += n;
        continue;
      }
      header.push(chunk[at++]!);
      step();
    }
  };
}
