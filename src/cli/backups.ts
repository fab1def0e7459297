import type { Command } from 'commander';
import { backup, restore, withDatabaseUrl } from './backup-restore';

/** `castsync backup FILE` and `castsync restore FILE` (docs/backups.md). */
export function registerBackups(program: Command): void {
  program
    .command('backup')
    .argument('<file>')
    .description('write the whole database to FILE, a consistent copy, while the server runs or not (docs/backups.md)')
    .action(async (file: string) => {
      const { header, rows } = await withDatabaseUrl((url) => backup(url, file));
      console.log(
        `Backup written to ${file}: ${header.tables.length} tables, ${rows} rows, schema ${header.migration}`,
      );
    });
  program
    .command('restore')
    .argument('<file>')
    .option('--replace', 'drop everything castsync has in the database first')
    .description('load a backup into an empty database (stop the server first), then bring its schema up to date')
    .action(async (file: string, opts: { replace?: boolean }) => {
      const { header, rows, upgraded } = await withDatabaseUrl((url, logger) =>
        restore(url, file, logger, { replace: opts.replace === true }),
      );
      console.log(
        `Restored ${rows} rows from ${file} (castsync ${header.version}, ${header.created})` +
          (upgraded.length > 0 ? `; ${upgraded.length} migrations applied since` : ''),
      );
    });
}
