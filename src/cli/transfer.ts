import type { Command } from 'commander';
import { loadConfig } from '../config';
import * as transfer from '../transfer/service';
import { REFUSED_LISTED, type Summary } from '../transfer/service';
import { userIdOf, withDatabase } from './database';
import { readPassword, terminalProgress } from './terminal';
import { writeFileDurably } from '../files';

/** The summary of an import for people; exit status 2 when something the source had was refused. */
export function printSummary(s: Summary, from: string, into: string): void {
  const n = (x: number) => x.toLocaleString('en');
  const parts = [
    ['devices', s.devices],
    ['feeds', s.feeds],
    ['actions', s.actions],
  ] as const;
  console.log(
    s.dryRun ? `Dry run: nothing was changed. ${from} into ${into} would bring:` : `Imported ${from} into ${into}:`,
  );
  for (const [name, p] of parts) {
    const first =
      p.added > 0 && p.sample.length > 0 ? `: ${p.sample.join(', ')}${p.added > p.sample.length ? ', …' : ''}` : '';
    console.log(`  ${name}: ${n(p.added)} new of ${n(p.total)}${first}`);
  }
  if (s.feeds.removedOnRemote > 0) {
    console.log(`  ${n(s.feeds.removedOnRemote)} feeds removed on the remote were not imported`);
  }
  if (parts.every(([, p]) => p.added === 0)) console.log('  nothing new: everything it holds is here already');
  const refused = parts.flatMap(([name, p]) => p.refused.map((r) => `${name}: ${r.item}: ${r.reason}`));
  const count = parts.reduce((sum, [, p]) => sum + p.refusedCount, 0);
  if (count > 0) {
    const listed = refused.slice(0, REFUSED_LISTED);
    console.log(`  ${n(count)} refused by castsync's rules${s.dryRun ? ' (would be)' : ''}:`);
    for (const line of listed) console.log(`    ${line}`);
    if (count > listed.length) console.log(`    … and ${n(count - listed.length)} more`);
    process.exitCode = 2;
  }
}

/**
 * Runs an import from the CLI: the administrator's, so any address may be reached; the user's only import
 * while it runs (refused while another is queued or running).
 */
async function cliImport(localUser: string, from: transfer.ImportSource, label: string, dryRun: boolean) {
  const config = loadConfig();
  const progress = terminalProgress();
  const summary = await withDatabase(async (ctx) => {
    const userId = await userIdOf(ctx, localUser);
    const run = () =>
      transfer.runImport(ctx.db, userId, from, {
        dryRun,
        policy: { allowPrivate: true, allowCidrs: [] },
        limits: transfer.remoteLimits(config),
        keep: { maxFavourites: config.favouritesMax, maxQueueItems: config.queueMaxItems },
        progress,
      });
    return transfer.importAlone(ctx.db, userId, run).finally(progress.end);
  });
  printSummary(summary, label, localUser);
}

/** `castsync import …`: from another sync server or from an archive. */
export function registerImports(program: Command): void {
  const imports = program
    .command('import')
    .description("bring a user's subscriptions and play history from another sync server, or from an archive");
  for (const source of ['gpodder', 'nextcloud'] as const) {
    imports
      .command(source)
      .argument('<server-url>', source === 'gpodder' ? 'e.g. https://gpodder.net' : 'e.g. https://cloud.example.org')
      .argument('<local-user>', 'the castsync user to import into')
      .requiredOption('--remote-user <name>', 'your name on the other server')
      .option(
        '--password-stdin',
        'read the password (a Nextcloud app password works) from standard input (a terminal asks unseen)',
      )
      .option('--dry-run', 'show what would be imported, change nothing')
      .description(
        source === 'gpodder'
          ? 'import from a gpodder.net v2 server (gpodder.net, opodsync, another castsync)'
          : 'import from a Nextcloud with the gpoddersync app',
      )
      .action(async (serverUrl: string, localUser: string, opts: { remoteUser: string; dryRun?: boolean }) => {
        const password = await readPassword({ repeat: false });
        const from = { source, serverUrl, remoteUser: opts.remoteUser, password };
        await cliImport(localUser, from, `${opts.remoteUser} at ${serverUrl}`, opts.dryRun === true);
      });
  }
  imports
    .command('archive')
    .argument('<file>', 'an archive written by castsync export (or "download my data")')
    .argument('<local-user>', 'the castsync user to import into')
    .option('--dry-run', 'show what would be imported, change nothing')
    .description('restore a castsync archive into a user')
    .action(async (file: string, localUser: string, opts: { dryRun?: boolean }) => {
      const bytes = await transfer.localFile(file);
      await cliImport(localUser, { source: 'archive', file: bytes }, `the archive ${file}`, opts.dryRun === true);
    });
  imports
    .command('gpodder-archive')
    .argument('<file>', 'the archive gpodder.net gave you (NAME.tar.zstd), or the tar inside it')
    .argument('<local-user>', 'the castsync user to import into')
    .option('--dry-run', 'show what would be imported, change nothing')
    .description('bring the subscriptions, play history and devices of a gpodder.net archive into a user')
    .action(async (file: string, localUser: string, opts: { dryRun?: boolean }) => {
      const from = {
        source: 'gpodder-archive' as const,
        file: await transfer.localFile(file),
        limits: transfer.gpodderArchiveLimits(loadConfig()),
      };
      await cliImport(localUser, from, `the gpodder.net archive ${file}`, opts.dryRun === true);
    });
}

/** `castsync export`: everything of one user as one JSON archive. */
export function registerExport(program: Command): void {
  program
    .command('export')
    .argument('<user>')
    .option('--output <file>', 'write the archive to this file (else to standard output)')
    .description(
      'write everything castsync keeps for a user (subscriptions with their history, episode actions, devices) as one JSON archive',
    )
    .action(async (name: string, opts: { output?: string }) => {
      const { text, counts } = await withDatabase(async (ctx) =>
        transfer.archiveTextOf(ctx.db, await userIdOf(ctx, name), name),
      );
      if (opts.output === undefined) {
        process.stdout.write(text);
        return;
      }
      // Whole or not at all, readable by its owner only: it is the user's history.
      await writeFileDurably(opts.output, text);
      console.error(
        `Archive of ${name} written to ${opts.output}: ${counts.subscriptions} subscription records, ` +
          `${counts.actions} episode actions, ${counts.devices} devices`,
      );
    });
}
