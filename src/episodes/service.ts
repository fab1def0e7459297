// The episodes service, one seam for every door and the rooms above: what they may call, by name.
// Episode actions and each episode's latest (actions.ts), the one intake of gpodder.net-format actions
// (interchange.ts), the one played rule (played.ts), an episode's state and its one reader (state.ts),
// the episode records of /v1/episodes and the resolver of what names an episode (records.ts), favourites
// (favourites.ts), the web player's views and writes (listening.ts), New episodes and their dismissals
// (new-episodes.ts), and the history's retention (retention.ts). The files behind
// it import each other, never this one; what is not named here (the repos, the player's settings rows)
// stays inside the room.
export { DOWNLOAD_PAGE, MAX_ACTIONS, forgetAll, forgetPodcast, history, recentPlays, record, since } from './actions';
export type { ActionName, EpisodeAction, HistoryCursor, StoredAction } from './actions';
export {
  archived as archivedFavourites,
  change as changeFavourites,
  favouriteTime,
  list as listFavourites,
} from './favourites';
export type { Favourite, FavouriteChange, NamedEpisode } from './favourites';
export { recordInterchange } from './interchange';
export {
  SKIPS,
  SPEEDS,
  episode,
  feedEpisodes,
  inProgress,
  markPlayed,
  playedAmong,
  playerSettings,
  savePosition,
  setPlayerSettings,
  setSpeed,
  speedFor,
} from './listening';
export type { Episode } from './listening';
export { NEW_DAYS, dismiss, newEpisodes } from './new-episodes';
export { page, resolveEpisodes, save, syncIdOf } from './records';
export type { EpisodeIdentity, RecordOutcome, RecordWrite, ResolvedEpisode, Saved } from './records';
export { ITEM_OF_EPISODE_SQL, PLAYED_SHARE, PLAYED_SQL, lengthOf, playedOf, reachedEnd } from './played';
export { KEYS_OF_PODCAST, RECORD_OF_PODCAST } from './repo';
export { readStates, readStatesAmong } from './state';
export type { EpisodeState, Stamped } from './state';
export { retentionTasks } from './retention';
