import { lengthOf, reachedEnd } from '../episodes/service';
import type { PlayRow } from './repo';

// What a history of plays adds up to: each play covers `started`…`position` of its episode (clipped to the
// episode's length when the app sent it), and a second of an episode counts once, on the day it was first
// heard. Overlapping, repeated and sought-back spans add only what no earlier play of that episode covered.

/** A play as the statistics read it, in the order the plays happened. */
export type Play = PlayRow;

/** The seconds a play added to what was heard of its episode. */
export type Credit = { day: string; podcast: string; device: string | null; seconds: number };
/** An episode heard to its end, on the day it first was. */
export type Finish = { day: string; episode: string };

/** The span a play covers, [from, to) in seconds; undefined when it covers nothing that can be counted. */
function spanOf(p: Play): [number, number] | undefined {
  if (p.started === null || p.position === null) return undefined;
  const from = Math.max(0, p.started);
  const to = p.total !== null && p.total > 0 ? Math.min(p.position, p.total) : p.position;
  return to > from ? [from, to] : undefined;
}

/**
 * Adds [from, to) to the sorted, disjoint spans already heard (changed in place) and returns how many
 * seconds of it were new.
 */
export function addSpan(heard: [number, number][], from: number, to: number): number {
  let first = 0;
  while (first < heard.length && heard[first]![1] < from) first++;
  // The spans from `first` to `last` (excluded) touch the new one: they merge into one.
  let [last, covered, start, end] = [first, 0, from, to];
  for (; last < heard.length && heard[last]![0] <= to; last++) {
    const [a, b] = heard[last]!;
    covered += Math.max(0, Math.min(b, to) - Math.max(a, from));
    [start, end] = [Math.min(start, a), Math.max(end, b)];
  }
  heard.splice(first, last - first, [start, end]);
  return to - from - covered;
}

/** Each play's new seconds, and the episodes finished, from plays in the order they happened. */
export function credit(plays: Iterable<Play>): { credits: Credit[]; finishes: Finish[] } {
  const heard = new Map<string, [number, number][]>();
  const finished = new Set<string>();
  const credits: Credit[] = [];
  const finishes: Finish[] = [];
  for (const p of plays) {
    const span = spanOf(p);
    if (span) {
      let spans = heard.get(p.episodeHash);
      if (!spans) heard.set(p.episodeHash, (spans = []));
      const seconds = addSpan(spans, span[0], span[1]);
      if (seconds > 0) credits.push({ day: p.day, podcast: p.podcastHash, device: p.device, seconds });
    }
    // Finished: the first play that reached the end by the one played rule's measure (played.ts).
    if (p.position !== null && reachedEnd(p.position, lengthOf(p.total, p.duration)) && !finished.has(p.episodeHash)) {
      finished.add(p.episodeHash);
      finishes.push({ day: p.day, episode: p.episodeHash });
    }
  }
  return { credits, finishes };
}
