import { Command } from 'commander';
import { withDatabase } from './database';
import { registerLogins } from './logins';
import { registerSessions } from './sessions';
import { registerTokens } from './tokens';
import { registerExport, registerImports } from './transfer';
import { registerUsers } from './users';
import { registerArchives } from './archives';
import { registerBackups } from './backups';
import { VERSION } from '../version';

// The CLI door: one file per command group registers its commands; this file is the program and its error mapping.
const program = new Command()
  .name('castsync')
  .description('castsync administration: users, tokens, imports and exports, and the database schema')
  .version(VERSION, '-V, --version', "print castsync's version")
  .showHelpAfterError();

registerArchives(registerUsers(program));
registerTokens(program);
registerLogins(program);
registerSessions(program);
registerImports(program);
registerExport(program);
registerBackups(program);

program
  .command('migrate')
  .description('bring the database schema up to date (the server also does this when it starts)')
  .action(async () => {
    await withDatabase(async () => undefined);
    console.log('Database schema is up to date');
  });

// The CLI's one mapping: a domain error is its reason; anything else its message (never a stack trace, also
// not one a library wrote into its message: node-pg-migrate's "Unable to ensure migrations table: …").
program.parseAsync(process.argv).catch((err: unknown) => {
  const message = err instanceof Error ? err.message : String(err);
  console.error(`castsync: ${message.replace(/\n\s+at .*/g, '')}`);
  process.exitCode = 1;
});
