/** An RGB PNG of `size` pixels a side, each pixel's colour from `paint(x, y)` with x, y in 0..1. */
export function png(size: number, paint: (x: number, y: number) => readonly number[]): Buffer;
