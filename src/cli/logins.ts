import type { Command } from 'commander';
import * as auth from '../auth/service';
import { InvalidInput } from '../errors';
import { userIdOf, withDatabase } from './database';

/** `castsync login …`: Nextcloud-mode app logins. */
export function registerLogins(program: Command): void {
  const login = program.command('login').description('Nextcloud-mode app logins (login flow v2)');
  login
    .command('approve')
    .argument('<code>', 'the code at the end of the page the app opened (/login/flow/CODE)')
    .argument('<name>', 'the user the app signs in as')
    .description('allow the app that opened a login flow to sign in as the user (it receives an app password)')
    .action(async (code: string, name: string) => {
      await withDatabase(async (ctx) => {
        const userId = await userIdOf(ctx, name);
        if (!(await auth.approveLoginFlow(ctx.db, code, userId))) {
          throw new InvalidInput('No such login flow waiting for approval (flows expire after 20 minutes)');
        }
      });
      console.log(`Approved: the app signs in as ${name} at its next poll`);
    });
}
