// Draws the web app's icons (src/web/static/icon-*.png): a white play triangle in a circle on castsync's
// blue; the maskable one keeps its drawing inside the central 80 % a launcher may cut to. Also the app
// stores' icons (docs/listing/icon/, deploy/cloudron/logo.png: the sizes docs/listing/README.md lists) and
// the same drawing as SVG. Written with node:zlib alone (png.js), so no image tool is needed:
// `node scripts/make-icons.mjs`.
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

// The same drawing as the stores take it: PNG at the sizes they ask for, and SVG (CasaOS prefers it).
const listing = new URL('../docs/listing/icon/', import.meta.url);
for (const size of [256, 512]) writeFileSync(new URL(`castsync-${size}.png`, listing), png(size, drawing(1)));
writeFileSync(new URL('../deploy/cloudron/logo.png', import.meta.url), png(256, drawing(1)));
const hex = (rgb) => `#${rgb.map((c) => c.toString(16).padStart(2, '0')).join('')}`;
// In units of the side: the ring between radii 0.36 and 0.44, the triangle from u = -0.12 to 0.2.
const [ring, triangle] = [
  `<circle cx="256" cy="256" r="${0.4 * 512}" fill="none" stroke="${hex(WHITE)}" stroke-width="${0.08 * 512}"/>`,
  `<polygon fill="${hex(WHITE)}" points="${[
    [-0.12, -0.32 * 0.62],
    [0.2, 0],
    [-0.12, 0.32 * 0.62],
  ]
    .map(([u, v]) => `${+(256 + u * 512).toFixed(2)},${+(256 + v * 512).toFixed(2)}`)
    .join(' ')}"/>`,
];
writeFileSync(
  new URL('castsync.svg', listing),
  `<svg xmlns="http://www.w3.org/2000/svg" width="512" height="512" viewBox="0 0 512 512">` +
    `<rect width="512" height="512" fill="${hex(BLUE)}"/>${ring}${triangle}</svg>\n`,
);
