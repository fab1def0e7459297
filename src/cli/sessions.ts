import type { Command } from 'commander';
import * as auth from '../auth/service';
import { InvalidInput } from '../errors';
import { userIdOf, withDatabase } from './database';

/** `castsync session …`: a user's sessions. */
export function registerSessions(program: Command): void {
  const session = program.command('session').description("a user's sessions (gpodder cookies and /v1 logins)");
  session
    .command('list')
    .argument('<name>')
    .description("list the user's sessions")
    .action(async (name: string) => {
      const rows = await withDatabase(async (ctx) => auth.listSessions(ctx.db, await userIdOf(ctx, name)));
      for (const r of rows) {
        console.log(`${r.id}\t${r.kind}\tcreated ${r.createdAt.toISOString()}\t${r.label ?? ''}`);
      }
    });
  session
    .command('revoke')
    .argument('<name>')
    .argument('<id>', 'a session id from session list')
    .description("revoke one of the user's sessions")
    .action(async (name: string, id: string) => {
      if (!/^\d+$/.test(id)) throw new InvalidInput('The session id is a number');
      await withDatabase(async (ctx) => {
        if (!(await auth.revokeSession(ctx, await userIdOf(ctx, name), Number(id)))) {
          throw new InvalidInput(`No session ${id} of ${name}`);
        }
      });
      console.log(`Session ${id} revoked`);
    });
}
