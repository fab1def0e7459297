/** How the pages write a time: in UTC, to the minute (the server does not know the reader's zone). */
export const when = (d: Date): string => `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/** A position or length in seconds as h:mm:ss or m:ss. */
export function duration(seconds: number | undefined): string {
  if (seconds === undefined) return '';
  const s = Math.max(0, Math.floor(seconds));
  const [h, m, sec] = [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60];
  const two = (n: number) => String(n).padStart(2, '0');
  return h > 0 ? `${h}:${two(m)}:${two(sec)}` : `${m}:${two(sec)}`;
}
