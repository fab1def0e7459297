import type { AuthContext } from './auth/service';
import type { Context } from './context';

/** What the protocol adapters have: the process's context and the credential cache they share. */
export type ApiContext = Context & AuthContext;
