import readline from 'node:readline';
import { Command } from 'commander';
import { AuthCache } from './auth/cache';
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

async function readPassword(fromStdin: boolean): Promise<string> {
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
  if ((await ask('Repeat password: ')) !== first) throw new InvalidInput('The passwords do not match');
  return first;
}

const program = new Command()
  .name('castsync')
  .description('castsync administration: users, tokens and the database schema')
  .showHelpAfterError();

const user = program.command('user').description('manage users');
user
  .command('add')
  .argument('<name>', 'username: 1-64 characters of A-Z a-z 0-9 . _ -')
  .option('--password-stdin', 'read the password from standard input')
  .option('--admin', 'make the user an administrator (manages users on the web page)')
  .description('create a user')
  .action(async (name: string, opts: { passwordStdin?: boolean; admin?: boolean }) => {
    const password = await readPassword(opts.passwordStdin === true);
    await withDatabase((ctx) => auth.addUser(ctx, name, password, { admin: opts.admin === true }));
    console.log(`User ${name} created${opts.admin ? ' (administrator)' : ''}`);
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
