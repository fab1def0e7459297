// Draws the web app's icons (src/web/static/icon-*.png): a white play triangle in a circle on castsync's
// blue; the maskable one keeps its drawing inside the central 80 % a launcher may cut to. Written with
// node:zlib alone (png.js), so no image tool is needed: `node scripts/make-icons.mjs`.
import { writeFileSync } from 'node:fs';
import { png } from './png.js';

const BLUE = [29, 78, 216];
const WHITE = [255, 255, 255];

/** The drawing at `scale` of the icon (1: the whole icon): a ring and a play triangle. */
const drawing = (scale) => (x, y) => {
  const [u, v] = [(x - 0.5) / scale, (y - 0.5) / scale];
  const r = Math.hypot(u, v);
  if (r > 0.36 && r < 0.44) return WHITE;
  // The triangle: pointing right, centred a little right of the middle.
  if (u > -0.12 && u < 0.2 && Math.abs(v) < (0.2 - u) * 0.62) return WHITE;
  return BLUE;
};

const dir = new URL('../src/web/static/', import.meta.url);
writeFileSync(new URL('icon-192.png', dir), png(192, drawing(1)));
writeFileSync(new URL('icon-512.png', dir), png(512, drawing(1)));
writeFileSync(new URL('icon-maskable-512.png', dir), png(512, drawing(0.78)));
