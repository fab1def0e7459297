import { execFileSync } from 'node:child_process';
import { InvalidInput } from '../../src/errors';
import { frameWindow, MAX_WINDOW, windowGuard } from '../../src/transfer/zstd-frames';

// The walk over zstd frame and block headers that refuses a huge window before the decoder allocates it
// (src/transfer/zstd-frames.ts), on real output of the zstd tool (.ci/run installs it).

const zstd = (input: Buffer, ...args: string[]) =>
  execFileSync('zstd', ['-q', '-c', ...args], { input, maxBuffer: 1 << 24 });

/** Feeds the bytes to a guard in chunks of `size`: what it throws, if anything. */
function guarded(bytes: Buffer, size: number): unknown {
  const guard = windowGuard();
  try {
    for (let at = 0; at < bytes.length; at += size) guard(bytes.subarray(at, at + size));
  } catch (err) {
    return err;
  }
  return undefined;
}

// 3 MB of text that compresses a little: raw, compressed and RLE blocks.
let seed = 7;
const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
const body = Buffer.from(
  Array.from({ length: 3_000_000 }, (_, i) => (i % 4096 < 64 ? 'a' : String.fromCharCode(97 + (random() % 26)))).join(
    '',
  ),
);

test('many blocks, several frames, with and without checksums, any chunking: every real frame passes', () => {
  const inputs = [
    zstd(body, '-19'),
    zstd(body, '-1', '--no-check'),
    Buffer.concat([zstd(body.subarray(0, 1_000_000), '-3'), zstd(body.subarray(1_000_000), '-3', '--no-check')]),
  ];
  for (const input of inputs) {
    for (const size of [1, 7, 1000, input.length]) {
      // One byte at a time is slow on 3 MB: only the first 200 KB then.
      const bytes = size === 1 ? input.subarray(0, 200_000) : input;
      expect([size, guarded(bytes, size)]).toEqual([size, undefined]);
    }
  }
});

test('a frame asking for more than 128 MiB is refused, first or after a good one; a foreign frame too', () => {
  const forged = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xa0, ...Buffer.alloc(30)]);
  expect(frameWindow(forged)).toBe(2 ** 30);
  expect(frameWindow(forged)! > MAX_WINDOW).toBe(true);
  for (const bytes of [forged, Buffer.concat([zstd(body.subarray(0, 100_000)), forged])]) {
    const err = guarded(bytes, 4096);
    expect(err).toBeInstanceOf(InvalidInput);
    expect((err as Error).message).toMatch(/asks for too much memory/);
  }
  const foreign = guarded(Buffer.concat([zstd(body.subarray(0, 1000)), Buffer.from('not zstd at all')]), 64);
  expect((foreign as Error).message).toMatch(/not zstd frames/);
  // A window of exactly 128 MiB (descriptor 0x88: 2^(10+17)) is what the zstd tool decodes: allowed.
  expect(guarded(Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x88]), 6)).toBeUndefined();
});
