/** A download's pages read to the end (episodes.since): the JSON of its actions, and its read time. */
export async function readAll(pages: AsyncGenerator<string, Date, undefined>): Promise<{ json: string; readAt: Date }> {
  const read: string[] = [];
  for (;;) {
    const next = await pages.next();
    if (next.done) return { json: read.join(','), readAt: next.value };
    read.push(next.value);
  }
}
