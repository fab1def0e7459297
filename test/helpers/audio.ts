import type http from 'node:http';

// Audio for the browser tests: a short WAV file, served with range requests from the loopback feed server
// (castsync never proxies media).

/** `seconds` of 8 kHz, 8-bit mono silence. */
export function wav(seconds = 20): Buffer {
  const rate = 8000;
  const data = Buffer.alloc(rate * seconds, 128);
  const head = Buffer.alloc(44);
  head.write('RIFF', 0);
  head.writeUInt32LE(36 + data.length, 4);
  head.write('WAVEfmt ', 8);
  head.writeUInt32LE(16, 16);
  head.writeUInt16LE(1, 20); // PCM
  head.writeUInt16LE(1, 22); // mono
  head.writeUInt32LE(rate, 24);
  head.writeUInt32LE(rate, 28);
  head.writeUInt16LE(1, 32);
  head.writeUInt16LE(8, 34);
  head.write('data', 36);
  head.writeUInt32LE(data.length, 40);
  return Buffer.concat([head, data]);
}

/** The file, with range requests (a player seeks with them). */
export const audio =
  (body: Buffer) =>
  (req: http.IncomingMessage, res: http.ServerResponse): void => {
    const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    const headers = { 'content-type': 'audio/wav', 'accept-ranges': 'bytes' };
    if (!range) return void res.writeHead(200, { ...headers, 'content-length': body.length }).end(body);
    const start = Number(range[1]);
    const end = range[2] ? Math.min(Number(range[2]), body.length - 1) : body.length - 1;
    res
      .writeHead(206, { ...headers, 'content-range': `bytes ${start}-${end}/${body.length}` })
      .end(body.subarray(start, end + 1));
  };
