// The shape of the scale bench's data set, shared by the generator (generate.mjs) and the loopback feed
// hosts (bench/feeds.mjs): who the users are, and which feeds exist and what they serve.
import { createHash } from 'node:crypto';

/** gpodder.net in 2019, at SCALE=1: accounts, accounts active within a year, episode actions. */
export const FULL = { users: 150_000, active: 7_000, actions: 73_000_000, feeds: 100_000 };

/**
 * The measured users: the same in every data set (the baseline and each SCALE), so that a figure
 * compares the same person's requests on tables of different sizes. PROBES users with 30 subscriptions
 * and 125 actions each, and one user with a long history; together 20,000 actions, the baseline's size.
 */
export const PROBES = 64;
export const PROBE = { subs: 30, actions: 125, devices: 2 };
export const HISTORY = { subs: 60, actions: 12_000, devices: 3 };
/** The feeds the measured users subscribe to are among the most popular ones (Zipf over this many). */
export const PROBE_FEEDS = 200;

/** The users of the long tail at a SCALE: how many, and how many actions each. */
export const bigUsers = (scale) =>
  scale >= 0.1
    ? { count: Math.max(1, Math.round(10 * scale)), actions: 200_000 }
    : { count: scale > 0 ? 1 : 0, actions: Math.round(2_000_000 * scale) };

/** Distinct feeds at a SCALE (ranks 1..n, rank 1 the most subscribed), and those with items (the popular ones). */
export const feedCount = (scale) => Math.max(PROBE_FEEDS * 5, Math.round(FULL.feeds * scale));
export const popularCount = (feeds) => Math.max(PROBE_FEEDS, Math.round(feeds / 50));

export const FEED_HOSTS = 20;
export const ITEMS = 100;
/** A feed's URL: on one of FEED_HOSTS loopback addresses, so that the fetcher's cycle can really fetch it. */
export const feedUrl = (port, rank) => `http://127.0.0.${2 + (rank % FEED_HOSTS)}:${port}/${rank}.xml`;

/** One feed in ten declares a podcast:guid of its own (not the one its URL gives), as moved feeds do. */
export const declaresGuid = (rank) => rank % 10 === 3;
export function declaredGuid(rank) {
  const h = createHash('md5').update(`declared-${rank}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** Episode k of a feed: its guid and enclosure URL (the generator writes the same in SQL). */
const episodeGuid = (rank, k) => `${rank}-episode-${k}`;
const enclosure = (rank, k) => `https://media.example/${rank}/episode-${k}.mp3`;
const item = (rank, k) => `<item><title>Episode ${k} of show ${rank}</title>
<guid isPermaLink="false">${episodeGuid(rank, k)}</guid>
<pubDate>${new Date(Date.UTC(2026, 10, 1) - k * 86_400_000).toUTCString()}</pubDate>
<description><![CDATA[<p>Show notes of episode ${k}: ${'what was said, who said it, and the links. '.repeat(8)}</p>]]></description>
<enclosure url="${enclosure(rank, k)}" length="48000000" type="audio/mpeg"/>
<itunes:duration>${1200 + ((rank * 7 + k * 13) % 4800)}</itunes:duration></item>`;

/** The feed of a rank as the loopback server serves it: ITEMS episodes, and its podcast:guid if it declares one. */
export const feedXml = (rank) => `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns:podcast="https://podcastindex.org/namespace/1.0">
<channel><title>Show ${rank}</title><link>https://show.example/${rank}/</link><language>en</language>
<description>A show served to the scale bench.</description><itunes:author>Bench</itunes:author>
<itunes:image href="https://show.example/${rank}/cover.jpg"/>${declaresGuid(rank) ? `\n<podcast:guid>${declaredGuid(rank)}</podcast:guid>` : ''}
${Array.from({ length: ITEMS }, (_, k) => item(rank, k)).join('\n')}
</channel></rss>`;
