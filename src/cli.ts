import fs from 'node:fs/promises';
import path from 'node:path';
import readline from 'node:readline';
import { Command } from 'commander';
import { AuthCache } from './auth/cache';
import { backup, restore, withDatabaseUrl } from './backup';
import { VERSION } from './version';
import * as accounts from './auth/accounts';
import * as auth from './auth/service';
import * as deletions from './deletions/service';
import { loadConfig } from './config';
import { whenDatabaseUp } from './db/connect';
import { openDatabase } from './db/database';
import { InvalidInput } from './errors';
import { createPool, type Db } from './db/pool';
import { migrateDatabase } from './jobs/migrate';
import { createLogger } from './logger';
import * as transfer from './transfer/service';
import type { Summary } from './transfer/service';

type Ctx = { db: Db; authCache: AuthCache };

/** Opens the database the server uses (joining a running server's embedded PostgreSQL), runs fn, closes it. */
async function withDatabase<T>(fn: (ctx: Ctx) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const verbose = config.logLevel === 'debug' || config.logLevel === 'trace';
  const logger = createLogger(verbose ? config.logLevel : 'warn');
  const database = await openDatabase(config, logger, { attach: true });
  try {
    await whenDatabaseUp(() => migrateDatabase(database.url, logger), logger, 10_000);
    const db = createPool(database.url, {
      max: 2,
      timeoutMs: config.dbTimeoutMs,
      logger,
      applicationName: 'castsync-cli',
    });
    try {
      return await fn({ db, authCache: new AuthCache(0) });
    } finally {
      await db.end();
    }
  } finally {
    await database.stop();
  }
}

async function userIdOf(ctx: Ctx, name: string): Promise<number> {
  const id = await auth.userIdOf(ctx.db, name);
  if (id === undefined) throw new InvalidInput(`No user ${name}`);
  return id;
}

async function readPassword(fromStdin: boolean, { repeat = true } = {}): Promise<string> {
  if (fromStdin || !process.stdin.isTTY) {
    const chunks: Buffer[] = [];
    for await (const c of process.stdin) chunks.push(c as Buffer);
    return Buffer.concat(chunks)
      .toString('utf8')
      .replace(/\r?\n$/, '');
  }
  const ask = (prompt: string) =>
    new Promise<string>((resolve) => {
      const rl = readline.createInterface({ input: process.stdin, output: process.stderr, terminal: true });
      const write = (rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput;
      (rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput = (s: string) => {
        if (s.startsWith(prompt)) write.call(rl, s);
      };
      rl.question(prompt, (answer) => {
        rl.close();
        process.stderr.write('\n');
        resolve(answer);
      });
    });
  const first = await ask('Password: ');
  if (repeat && (await ask('Repeat password: ')) !== first) throw new InvalidInput('The passwords do not match');
  return first;
}

const program = new Command()
  .name('castsync')
  .description('castsync administration: users, tokens, imports and exports, and the database schema')
  .version(VERSION, '-V, --version', "print castsync's version")
  .showHelpAfterError();

const user = program.command('user').description('manage users');
user
  .command('add')
  .argument('<name>', 'username: 1-64 characters of A-Z a-z 0-9 . _ -')
  .option('--password-stdin', 'read the password from standard input')
  .option('--admin', 'make the user an administrator (manages users on the web page)')
  .option('--sso', 'no castsync password: the user signs in with single sign-on only (docs/sso.md)')
  .description('create a user')
  .action(async (name: string, opts: { passwordStdin?: boolean; admin?: boolean; sso?: boolean }) => {
    const password = opts.sso ? null : await readPassword(opts.passwordStdin === true);
    await withDatabase((ctx) => auth.addUser(ctx, name, password, { admin: opts.admin === true }));
    console.log(`User ${name} created${opts.admin ? ' (administrator)' : ''}${opts.sso ? ', without a password' : ''}`);
  });
user
  .command('admin')
  .argument('<name>')
  .option('--remove', 'take the administrator role away instead')
  .description('make a user an administrator of the web page (or, with --remove, no longer one)')
  .action(async (name: string, opts: { remove?: boolean }) => {
    const admin = opts.remove !== true;
    if (!(await withDatabase((ctx) => accounts.setAdmin(ctx.db, name, admin)))) {
      throw new InvalidInput(`No user ${name}`);
    }
    console.log(admin ? `${name} is an administrator` : `${name} is no longer an administrator`);
  });
user
  .command('passwd')
  .argument('<name>')
  .option('--password-stdin', 'read the password from standard input')
  .description("set a user's password (and sign out the user's sessions)")
  .action(async (name: string, opts: { passwordStdin?: boolean }) => {
    const password = await readPassword(opts.passwordStdin === true);
    await withDatabase((ctx) => auth.setPassword(ctx, name, password));
    console.log(`Password of ${name} changed`);
  });
user
  .command('remove')
  .argument('<name>')
  .description('remove a user and all of their data')
  .action(async (name: string) => {
    await withDatabase((ctx) => auth.removeUser(ctx, name));
    console.log(`User ${name} removed`);
  });
user
  .command('start-over')
  .argument('<name>')
  .option('--yes', 'do not ask: the user has downloaded what they want to keep')
  .description(
    "forget a user's subscriptions and episode actions, without sending removals to their apps (each app " +
      'uploads its own list again at its next full sync); the account, devices and app passwords stay',
  )
  .action(async (name: string, opts: { yes?: boolean }) => {
    if (opts.yes !== true) {
      if (!process.stdin.isTTY) throw new InvalidInput('Give --yes to start over without a terminal to confirm on');
      const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
      const typed = await new Promise<string>((resolve) =>
        rl.question(
          `This forgets every subscription and episode action of ${name} (export first: OPML with the web page). Type the username to go on: `,
          (answer) => {
            rl.close();
            resolve(answer.trim());
          },
        ),
      );
      if (typed !== name) throw new InvalidInput('Not confirmed: nothing was changed');
    }
    const done = await withDatabase(async (ctx) => deletions.startOver(ctx.db, await userIdOf(ctx, name)));
    console.log(
      `${name} starts over: ${done.records} subscription records and ${done.actions} episode actions forgotten`,
    );
  });
user
  .command('list')
  .description('list users')
  .action(async () => {
    const rows = await withDatabase((ctx) => auth.listUsers(ctx.db));
    for (const r of rows)
      console.log(
        `${r.username}\t${r.subscriptions} subscriptions\tcreated ${r.created_at.toISOString()}${r.is_admin ? '\tadmin' : ''}`,
      );
  });

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

/** Progress on a terminal: one line, rewritten in place. */
function terminalProgress(): transfer.Progress & { end: () => void } {
  const tty = process.stderr.isTTY;
  let shown = false;
  const show = (step: string, done?: number, total?: number) => {
    if (!tty) return;
    const count = total === undefined ? '' : ` ${done ?? 0} of ${total}`;
    process.stderr.write(`\r\x1b[K${step}${count}`);
    shown = true;
  };
  return Object.assign(show, {
    end: () => {
      if (shown) process.stderr.write('\r\x1b[K');
    },
  });
}

/** The summary of an import for people; exit status 2 when something the source had was refused. */
function printSummary(s: Summary, from: string, into: string): void {
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
  if (refused.length > 0) {
    console.log(`  ${n(refused.length)} refused by castsync's rules${s.dryRun ? ' (would be)' : ''}:`);
    for (const line of refused.slice(0, 50)) console.log(`    ${line}`);
    if (refused.length > 50) console.log(`    … and ${n(refused.length - 50)} more`);
    process.exitCode = 2;
  }
}

/** Runs an import from the CLI: the administrator's, so any address may be reached. */
async function cliImport(localUser: string, from: transfer.ImportSource, label: string, dryRun: boolean) {
  const config = loadConfig();
  const progress = terminalProgress();
  const summary = await withDatabase(async (ctx) =>
    transfer
      .runImport(ctx.db, await userIdOf(ctx, localUser), from, {
        dryRun,
        policy: { allowPrivate: true, allowCidrs: [] },
        limits: { timeoutMs: config.importTimeout * 1000, maxBytes: config.importMaxBytes },
        progress,
      })
      .finally(progress.end),
  );
  printSummary(summary, label, localUser);
}

const imports = program
  .command('import')
  .description("bring a user's subscriptions and play history from another sync server, or from an archive");
for (const source of ['gpodder', 'nextcloud'] as const) {
  imports
    .command(source)
    .argument('<server-url>', source === 'gpodder' ? 'e.g. https://gpodder.net' : 'e.g. https://cloud.example.org')
    .argument('<local-user>', 'the castsync user to import into')
    .requiredOption('--remote-user <name>', 'your name on the other server')
    .option('--password-stdin', 'read the password (a Nextcloud app password works) from standard input')
    .option('--dry-run', 'show what would be imported, change nothing')
    .description(
      source === 'gpodder'
        ? 'import from a gpodder.net v2 server (gpodder.net, opodsync, another castsync)'
        : 'import from a Nextcloud with the gpoddersync app',
    )
    .action(
      async (
        serverUrl: string,
        localUser: string,
        opts: { remoteUser: string; passwordStdin?: boolean; dryRun?: boolean },
      ) => {
        const password = await readPassword(opts.passwordStdin === true, { repeat: false });
        const from = { source, serverUrl, remoteUser: opts.remoteUser, password };
        await cliImport(localUser, from, `${opts.remoteUser} at ${serverUrl}`, opts.dryRun === true);
      },
    );
}
imports
  .command('archive')
  .argument('<file>', 'an archive written by castsync export (or "download my data")')
  .argument('<local-user>', 'the castsync user to import into')
  .option('--dry-run', 'show what would be imported, change nothing')
  .description('restore a castsync archive into a user')
  .action(async (file: string, localUser: string, opts: { dryRun?: boolean }) => {
    const document = await fs.readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
      throw new InvalidInput(`Cannot read ${file}: ${err.code ?? err.message}`);
    });
    await cliImport(localUser, { source: 'archive', document }, `the archive ${file}`, opts.dryRun === true);
  });

imports
  .command('gpodder-archive')
  .argument('<file>', 'the archive gpodder.net gave you (NAME.tar.zstd), or the tar inside it')
  .argument('<local-user>', 'the castsync user to import into')
  .option('--dry-run', 'show what would be imported, change nothing')
  .description('bring the subscriptions, play history and devices of a gpodder.net archive into a user')
  .action(async (file: string, localUser: string, opts: { dryRun?: boolean }) => {
    const config = loadConfig();
    const limits = { maxBytes: config.gpodderArchiveMaxBytes, maxEntries: config.gpodderArchiveMaxEntries };
    const snapshot = await transfer.readGpodderArchiveFile(file, limits);
    const label = `the gpodder.net archive ${file}`;
    await cliImport(localUser, { source: 'gpodder-archive', snapshot }, label, opts.dryRun === true);
  });

program
  .command('export')
  .argument('<user>')
  .option('--output <file>', 'write the archive to this file (else to standard output)')
  .description(
    'write everything castsync keeps for a user (subscriptions with their history, episode actions, devices) as one JSON archive',
  )
  .action(async (name: string, opts: { output?: string }) => {
    const archive = await withDatabase(async (ctx) => transfer.exportArchive(ctx.db, await userIdOf(ctx, name), name));
    const text = JSON.stringify(archive, null, 2) + '\n';
    if (opts.output === undefined) {
      process.stdout.write(text);
      return;
    }
    // Whole or not at all, readable by its owner only: it is the user's history.
    const temporary = path.join(path.dirname(opts.output), `.${path.basename(opts.output)}.${process.pid}.tmp`);
    await fs.writeFile(temporary, text, { mode: 0o600 });
    await fs.rename(temporary, opts.output);
    console.error(
      `Archive of ${name} written to ${opts.output}: ${archive.subscriptions.length} subscription records, ` +
        `${archive.episode_actions.length} episode actions, ${archive.devices.length} devices`,
    );
  });

program
  .command('backup')
  .argument('<file>')
  .description('write the whole database to FILE, a consistent copy, while the server runs or not (docs/backups.md)')
  .action(async (file: string) => {
    const { header, rows } = await withDatabaseUrl((url) => backup(url, file));
    console.log(`Backup written to ${file}: ${header.tables.length} tables, ${rows} rows, schema ${header.migration}`);
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

program
  .command('migrate')
  .description('bring the database schema up to date (the server also does this when it starts)')
  .action(async () => {
    await withDatabase(async () => undefined);
    console.log('Database schema is up to date');
  });

// The CLI's one mapping: a domain error is its reason; anything else its message (never a stack trace).
program.parseAsync(process.argv).catch((err: unknown) => {
  console.error(`castsync: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
