import {
  type AddressPolicy,
  type FeedItem,
  FeedParseError,
  FetchFailed,
  fetchFeed,
  type FetchLimits,
  parseFeed,
} from '../feeds/service';
import { urlForLog, type Logger } from '../logger';
import { checkFeedUrl } from '../subscriptions/service';

// A feed as a person sees it before subscribing: fetched now, under the fetcher's address policy and
// limits, and not stored (the fetcher reads it like any other once someone subscribes).

export type Preview = {
  url: string;
  title: string | null;
  description: string | null;
  author: string | null;
  artworkUrl: string | null;
  link: string | null;
  /** The newest episodes, newest first. */
  latest: FeedItem[];
};

export type PreviewOutcome = { ok: true; feed: Preview } | { ok: false; message: string };

/** Episodes a preview shows. */
const LATEST = 10;

/** Show notes are HTML: the preview shows their text. */
const plain = (html: string | null) =>
  html
    ?.replace(/<[^>]*>/g, ' ')
    .replace(/&nbsp;/g, ' ')
    .replace(/\s+/g, ' ')
    .trim() || null;

export async function preview(
  fetcher: { policy: AddressPolicy; limits: FetchLimits },
  logger: Logger,
  url: string,
): Promise<PreviewOutcome> {
  const checked = checkFeedUrl(url);
  if (!checked.ok) return { ok: false, message: `${url || '(empty)'}: ${checked.problem}` };
  try {
    const fetched = await fetchFeed(checked.feedUrl, { etag: null, lastModified: null }, fetcher);
    if (fetched.kind !== 'body') return { ok: false, message: 'The feed sent nothing to show.' };
    const facts = parseFeed(fetched.body);
    return {
      ok: true,
      feed: {
        url: checked.feedUrl,
        title: facts.title,
        description: plain(facts.description),
        author: facts.author,
        artworkUrl: facts.artworkUrl,
        link: facts.link,
        latest: facts.items.slice(0, LATEST),
      },
    };
  } catch (err) {
    if (!(err instanceof FetchFailed || err instanceof FeedParseError)) throw err;
    logger.info({ url: urlForLog(checked.feedUrl), reason: err.message }, 'feed preview failed');
    const why = err instanceof FeedParseError ? 'it is not a feed' : err.message;
    return { ok: false, message: `The feed could not be previewed: ${why}.` };
  }
}
