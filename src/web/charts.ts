// Bar charts drawn on the server as SVG: no script, no chart library. Each chart is an image with a name
// (its title) and a description of its figures; the page shows the same figures as a table beside it, for
// screen readers and for reading exact values.

export type Bar = { label: string; value: number };

const escape = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const WIDTH = 720;
const HEIGHT = 200;
/** Room under the bars for their labels, above them for the scale, and beside them for the outer labels. */
const [AXIS, TOP, SIDE] = [24, 20, 24];

/**
 * A vertical bar chart of the bars in order, labelled under every `labelEvery`th bar. `describe` writes a
 * value in words for the description.
 */
export function barChart(
  id: string,
  title: string,
  bars: Bar[],
  describe: (value: number) => string,
  labelEvery = 1,
): string {
  const max = Math.max(1, ...bars.map((b) => b.value));
  const step = WIDTH / Math.max(1, bars.length);
  const width = Math.max(1, step * 0.8);
  const peak = bars.reduce<Bar | undefined>((best, b) => (!best || b.value > best.value ? b : best), undefined);
  const desc =
    peak && peak.value > 0
      ? `${bars.length} bars; the highest is ${escape(peak.label)} with ${escape(describe(peak.value))}. The table that follows gives every figure.`
      : 'Nothing listened in this period.';
  // The scale: what the highest bar stands for, and a line at its height.
  const scale =
    peak && peak.value > 0
      ? `<text x="0" y="${TOP - 6}">${escape(describe(max))}</text>` +
        `<line class="scale" x1="0" y1="${TOP}" x2="${WIDTH}" y2="${TOP}" />`
      : '';
  const rects = bars
    .map((b, i) => {
      const h = Math.round((b.value / max) * (HEIGHT - AXIS - TOP));
      const x = (i * step + (step - width) / 2).toFixed(1);
      const label =
        i % labelEvery === 0
          ? `<text x="${(i * step + step / 2).toFixed(1)}" y="${HEIGHT - 6}" text-anchor="middle">${escape(b.label)}</text>`
          : '';
      return `<rect x="${x}" y="${HEIGHT - AXIS - h}" width="${width.toFixed(1)}" height="${h}"><title>${escape(b.label)}: ${escape(describe(b.value))}</title></rect>${label}`;
    })
    .join('');
  return (
    `<svg class="chart" viewBox="${-SIDE} 0 ${WIDTH + 2 * SIDE} ${HEIGHT}" role="img" aria-labelledby="${id}-title ${id}-desc" focusable="false">` +
    `<title id="${id}-title">${escape(title)}</title><desc id="${id}-desc">${desc}</desc>` +
    scale +
    `<line x1="0" y1="${HEIGHT - AXIS}" x2="${WIDTH}" y2="${HEIGHT - AXIS}" />${rects}</svg>`
  );
}
