// The deletions service, one seam for every door and the rooms above: what they may call, by name.
// Deletion requests, their job, and starting over (requests.ts). The files behind it import each other,
// never this one.
export {
  countPending,
  deletionStatus,
  deletionTasks,
  forgetRequests,
  performDeletion,
  requestDeletion,
} from './requests';
export type { Deletion } from './requests';
