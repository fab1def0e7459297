import type { Queryable } from '../db/pool';
import type { Chapter } from './chapters';
import type { TranscriptFormat } from './transcripts';

// The SQL of an item's chapters and transcript: what the item declares, and the copy fetched of each.

export type DocumentKind = 'chapters' | 'transcript';

export type DeclaredRow = {
  chapters_url: string | null;
  chapters: Chapter[] | null;
  transcript_url: string | null;
  transcript_format: TranscriptFormat | null;
};

export type CopyRow = {
  source_url: string;
  /** The address the content came from (null for a failure, or a copy kept before addresses were). */
  source_address: string | null;
  fetched_at: Date;
  content: unknown;
  error: string | null;
};

/** What the item declares, with the copy kept of the `kind` document (if any); undefined for no such item. */
export async function declared(
  db: Queryable,
  itemId: string,
  kind: DocumentKind,
): Promise<(DeclaredRow & { copy: CopyRow | null }) | undefined> {
  const r = await db.query<DeclaredRow & { copy: CopyRow | null }>(
    `SELECT i.chapters_url, i.chapters, i.transcript_url, i.transcript_format,
            CASE WHEN d.item_id IS NULL THEN NULL
                 ELSE json_build_object('source_url', d.source_url, 'source_address', host(d.source_address),
                                        'fetched_at', d.fetched_at,
                                        'content', d.content, 'error', d.error) END AS copy
       FROM feed_items i LEFT JOIN item_documents d ON d.item_id = i.id AND d.kind = $2
      WHERE i.id = $1`,
    [itemId, kind],
  );
  const row = r.rows[0];
  if (row?.copy) row.copy.fetched_at = new Date(row.copy.fetched_at);
  return row;
}

/** Keeps what a fetch of the item's `kind` document gave: its content and the address it came from, or why there is none. */
export async function saveCopy(
  db: Queryable,
  itemId: string,
  kind: DocumentKind,
  sourceUrl: string,
  outcome: { content: unknown; address: string } | { error: string },
): Promise<void> {
  const content = 'content' in outcome ? JSON.stringify(outcome.content) : null;
  const error = 'error' in outcome ? outcome.error.slice(0, 500) : null;
  const address = 'address' in outcome ? outcome.address : null;
  // The item may have left its feed meanwhile: then there is nothing to keep the copy with.
  await db.query(
    `INSERT INTO item_documents (item_id, kind, source_url, source_address, fetched_at, content, error)
     SELECT $1, $2, $3, $6::inet, now(), $4::jsonb, $5 WHERE EXISTS (SELECT 1 FROM feed_items WHERE id = $1)
     ON CONFLICT (item_id, kind) DO UPDATE SET source_url = excluded.source_url,
       source_address = excluded.source_address, fetched_at = excluded.fetched_at,
       content = excluded.content, error = excluded.error`,
    [itemId, kind, sourceUrl, content, error, address],
  );
}
