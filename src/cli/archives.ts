import type { Command } from 'commander';
import * as auth from '../auth/service';
import { loadConfig } from '../config';
import { InvalidInput } from '../errors';
import { parseTimestamp } from '../timestamps';
import * as transfer from '../transfer/service';
import { withDatabase } from './database';
import { terminalProgress } from './terminal';
import { printSummary } from './transfer';

// `castsync users archive|restore|archived|forget-archived`: idle accounts (docs/idle-accounts.md).

/** A day (YYYY-MM-DD, its start in UTC) or a moment with its zone. */
function parseDate(text: string): Date {
  const date = parseTimestamp(/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text);
  if (!date) throw new InvalidInput(`Not a date: ${text} (YYYY-MM-DD, or a time such as 2024-01-01T00:00:00Z)`);
  return date;
}

const day = (d: Date) => d.toISOString().slice(0, 10);
const keptIn = (file: string | null) =>
  file === null ? 'kept in the database' : `kept in the database and in ${file}`;
const counted = (c: transfer.Counts) =>
  `${c.subscriptions} subscription records, ${c.actions} episode actions, ${c.devices} devices, ` +
  `${c.favourites} favourites, ${c.queue} in Up next`;

/** The idle accounts' commands, on `castsync user`. */
export function registerArchives(user: Command): void {
  userArchive(user);
  userRestore(user);
  userArchived(user);
  userForgetArchived(user);
}

/**
 * `castsync user archive --idle-since DAY`: idle users archived (kept in the database, a copy in --dir or
 * ARCHIVE_DIR when set), then removed (--dry-run: listed).
 */
function userArchive(user: Command): void {
  user
    .command('archive')
    .alias('archive-idle')
    .requiredOption('--idle-since <date>', 'archive the users last active before this day (YYYY-MM-DD, UTC)')
    .option('--dir <dir>', 'also write a copy of each archive to this folder, NAME.json (default: ARCHIVE_DIR if set)')
    .option('--dry-run', 'list the idle users, change nothing')
    .description(
      "keep each idle user's archive (what export writes) in the database, read it back, and only then remove " +
        'the user; their sign-in then says the account is archived, and users restore brings it back',
    )
    .action(async (opts: { idleSince: string; dir?: string; dryRun?: boolean }) => {
      const before = parseDate(opts.idleSince);
      const dir = opts.dir ?? loadConfig().archiveDir;
      const dryRun = opts.dryRun === true;
      const each = (o: transfer.Outcome) =>
        console.log(
          o.removed
            ? `Archived ${o.username} (last active ${day(o.lastActive)}): ${counted(o.counts)} ${keptIn(o.file)}`
            : `Left ${o.username} as they are: active while being archived`,
        );
      const run = await withDatabase((ctx) => transfer.archiveIdle(ctx, { before, dir, dryRun, each }));
      const n = run.idle.length;
      const accounts = `${n} account${n === 1 ? '' : 's'} idle since ${day(before)}`;
      const into = dir === undefined ? 'in the database' : `in the database, with copies in ${dir}`;
      if (dryRun) {
        console.log(`Dry run: nothing was changed. ${accounts} would be archived ${into}${n > 0 ? ':' : ''}`);
        for (const u of run.idle) console.log(`  ${u.username}\tlast active ${u.lastActive.toISOString()}`);
      } else {
        console.log(`${run.outcomes.filter((o) => o.removed).length} of ${accounts} archived ${into}`);
      }
    });
}

/** `castsync user restore NAME`: an archived user back from their archive, or an archive into a new user. */
function userRestore(user: Command): void {
  user
    .command('restore')
    .argument('<name>', 'the archived user')
    .option('--dir <dir>', 'the folder of the archive, NAME.json in it (default: the archive kept in the database)')
    .option('--file <file>', 'the archive file itself')
    .description("bring an archived user back as they were, from their archive; also a user's archive into a new user")
    .action(async (name: string, opts: { dir?: string; file?: string }) => {
      const config = loadConfig();
      const file = opts.file ?? (opts.dir === undefined ? undefined : transfer.archiveFile(opts.dir, name));
      const keep = { maxFavourites: config.favouritesMax, maxQueueItems: config.queueMaxItems };
      const progress = terminalProgress();
      const done = await withDatabase((ctx) =>
        transfer.restoreArchived(ctx, name, { file, keep, progress }).finally(progress.end),
      );
      printSummary(
        done.summary,
        done.file === undefined ? 'the archive kept in the database' : `the archive ${done.file}`,
        name,
      );
      if (done.how === 'new') {
        console.log(`${name} had no archived account: made without a password (castsync user passwd ${name})`);
      } else if (done.hasPassword) {
        console.log(`${name} is back: they sign in with their password and app passwords as before`);
      } else {
        console.log(`${name} is back, without a castsync password (single sign-on, or castsync user passwd ${name})`);
      }
    });
}

/** `castsync user archived`: the archived users, with when and where. */
function userArchived(user: Command): void {
  user
    .command('archived')
    .description('list the archived users: when archived, last active, and where their archive is kept')
    .action(async () => {
      const rows = await withDatabase((ctx) => auth.archivedAccounts(ctx.db));
      for (const r of rows) {
        const where = r.inDatabase ? keptIn(r.file) : `in ${r.file}`;
        console.log(`${r.username}\tarchived ${day(r.archivedAt)}\tlast active ${day(r.lastActive)}\t${where}`);
      }
    });
}

/** `castsync user forget-archived NAME`: an archived user forgotten, their name free again. */
function userForgetArchived(user: Command): void {
  user
    .command('forget-archived')
    .argument('<name>')
    .option('--file <file>', 'write the archive the database keeps to this file first (required when it keeps one)')
    .description(
      'forget an archived user, so that the name is free again (its archive kept in a file, for import archive)',
    )
    .action(async (name: string, opts: { file?: string }) => {
      await withDatabase((ctx) => transfer.forgetArchived(ctx, name, opts.file));
      const kept = opts.file === undefined ? '' : `; its archive is in ${opts.file}`;
      console.log(`The archived account ${name} is forgotten; its name is free${kept}`);
    });
}
