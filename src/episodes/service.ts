// The episodes service, one seam for every door and the rooms above: what they may call, by name.
// Episode actions and each episode's latest (actions.ts), the one intake of gpodder.net-format actions
// (interchange.ts), the episode records of /v1/episodes (records.ts), favourites (favourites.ts), the web
// player's views and writes (listening.ts), and the history's retention (retention.ts). The files behind
// it import each other, never this one; what is not named here (the repos, the player's settings rows)
// stays inside the room.
export { DOWNLOAD_PAGE, MAX_ACTIONS, forgetAll, forgetPodcast, history, recentPlays, record, since } from './actions';
export type { ActionName, EpisodeAction, HistoryCursor, Skipped, StoredAction } from './actions';
export {
  archived as archivedFavourites,
  change as changeFavourites,
  favouriteTime,
  favouritesAmong,
  list as listFavourites,
} from './favourites';
export type { Favourite, FavouriteChange, NamedEpisode } from './favourites';
export { recordInterchange } from './interchange';
export {
  PLAYED_SHARE,
  SKIPS,
  SPEEDS,
  episode,
  feedEpisodes,
  inProgress,
  isPlayed,
  markPlayed,
  playerSettings,
  savePosition,
  setPlayerSettings,
  setSpeed,
  speedFor,
} from './listening';
export type { Episode } from './listening';
export { page, resolveEpisodes, save, syncIdOf } from './records';
export type { EpisodeIdentity, EpisodeRecord, RecordOutcome, RecordWrite, ResolvedEpisode, Stamped } from './records';
export { retentionTasks } from './retention';
