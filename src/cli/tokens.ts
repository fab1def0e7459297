import type { Command } from 'commander';
import * as auth from '../auth/service';
import { InvalidInput } from '../errors';
import { withDatabase } from './database';

/** `castsync token …`: app passwords. */
export function registerTokens(program: Command): void {
  const token = program
    .command('token')
    .description('manage app passwords (what the API docs call personal access tokens)');
  token
    .command('create')
    .argument('<name>', 'the user the token belongs to')
    .option('--label <label>', 'a note to recognise the token by')
    .description('create an app password (shown once)')
    .action(async (name: string, opts: { label?: string }) => {
      const t = await withDatabase((ctx) => auth.createAppPasswordFor(ctx, name, opts.label));
      console.error(`Token ${t.id} for ${name} (shown only now; use it as a Bearer token or as the Basic password):`);
      console.log(t.token);
    });
  token
    .command('revoke')
    .argument('<id>', 'the token id printed by token create')
    .description('revoke an app password')
    .action(async (id: string) => {
      if (!/^\d+$/.test(id)) throw new InvalidInput('The token id is a number');
      await withDatabase((ctx) => auth.revokeAppPasswordById(ctx, Number(id)));
      console.log(`Token ${id} revoked`);
    });
}
