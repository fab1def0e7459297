import type { Command } from 'commander';
import * as auth from '../auth/service';
import * as transfer from '../transfer/service';
import { InvalidInput } from '../errors';
import { userIdOf, withDatabase } from './database';
import { askLine, readPassword } from './terminal';

/** A password comes from standard input anyway when it is no terminal: the option is for scripts to say so. */
const PASSWORD_STDIN = 'read the password from standard input (a pipe or a file; a terminal asks unseen)';

/** `castsync user …`: accounts, roles, passwords, starting over. */
export function registerUsers(program: Command): Command {
  const user = program.command('user').alias('users').description('manage users');
  userAdd(user);
  userAdmin(user);
  userPasswd(user);
  userRemove(user);
  userStartOver(user);
  userList(user);
  return user;
}

/** `castsync user add NAME`: a user, with a password, an administrator, or for single sign-on only. */
function userAdd(user: Command): void {
  user
    .command('add')
    .argument('<name>', 'username: 1-64 characters of A-Z a-z 0-9 . _ -')
    .option('--password-stdin', PASSWORD_STDIN)
    .option('--admin', 'make the user an administrator (manages users on the web page)')
    .option('--sso', 'no castsync password: the user signs in with single sign-on only (docs/sso.md)')
    .description('create a user')
    .action(async (name: string, opts: { admin?: boolean; sso?: boolean }) => {
      const password = opts.sso ? null : await readPassword();
      await withDatabase((ctx) => auth.addUser(ctx, name, password, { admin: opts.admin === true }));
      console.log(
        `User ${name} created${opts.admin ? ' (administrator)' : ''}${opts.sso ? ', without a password' : ''}`,
      );
    });
}

/** `castsync user admin NAME`: the administrator role given or (--remove) taken away. */
function userAdmin(user: Command): void {
  user
    .command('admin')
    .argument('<name>')
    .option('--remove', 'take the administrator role away instead')
    .description('make a user an administrator of the web page (or, with --remove, no longer one)')
    .action(async (name: string, opts: { remove?: boolean }) => {
      const admin = opts.remove !== true;
      if (!(await withDatabase((ctx) => auth.setAdmin(ctx.db, name, admin)))) {
        throw new InvalidInput(`No user ${name}`);
      }
      console.log(admin ? `${name} is an administrator` : `${name} is no longer an administrator`);
    });
}

/** `castsync user passwd NAME`: a new password; every session ends, app passwords too if asked. */
function userPasswd(user: Command): void {
  user
    .command('passwd')
    .argument('<name>')
    .option('--password-stdin', PASSWORD_STDIN)
    .option('--revoke-app-passwords', "revoke the user's app passwords too (each app must be given a new one)")
    .description(
      "set a user's password; every session of the user ends (browsers, gpodder apps, /v1 logins), app " +
        'passwords stay unless --revoke-app-passwords',
    )
    .action(async (name: string, opts: { revokeAppPasswords?: boolean }) => {
      const password = await readPassword();
      const revokeAppPasswords = opts.revokeAppPasswords === true;
      await withDatabase((ctx) => auth.setPassword(ctx, name, password, { revokeAppPasswords }));
      console.log(
        `Password of ${name} changed; every session of ${name} ended` +
          (revokeAppPasswords ? ', and their app passwords were revoked' : ' (app passwords stay)'),
      );
    });
}

/**
 * A change nothing undoes goes on once the username is typed at the terminal, or with --yes; without a
 * terminal to ask on, --yes is required.
 */
async function confirmByName(name: string, opts: { yes?: boolean }, what: string, warning: string): Promise<void> {
  if (opts.yes === true) return;
  if (!process.stdin.isTTY) throw new InvalidInput(`Give --yes to ${what} without a terminal to confirm on`);
  const typed = await askLine(`${warning} Type the username to go on: `);
  if (typed !== name) throw new InvalidInput('Not confirmed: nothing was changed');
}

/** `castsync user remove NAME`: the user and all of their data, confirmed first. */
function userRemove(user: Command): void {
  user
    .command('remove')
    .argument('<name>')
    .option('--yes', 'do not ask: the user has downloaded what they want to keep')
    .description('remove a user and all of their data, confirmed first')
    .action(async (name: string, opts: { yes?: boolean }) => {
      await confirmByName(
        name,
        opts,
        'remove',
        `This removes ${name} and everything of theirs: subscriptions, episode actions, devices, app passwords (export first: OPML and the archive, with the web page).`,
      );
      await withDatabase((ctx) => auth.removeUser(ctx, name));
      console.log(`User ${name} removed`);
    });
}

/** `castsync user start-over NAME`: subscriptions and episode actions forgotten, confirmed first. */
function userStartOver(user: Command): void {
  user
    .command('start-over')
    .argument('<name>')
    .option('--yes', 'do not ask: the user has downloaded what they want to keep')
    .description(
      "forget a user's subscriptions and episode actions, without sending removals to their apps (each app " +
        'uploads its own list again at its next full sync); the account, devices and app passwords stay',
    )
    .action(async (name: string, opts: { yes?: boolean }) => {
      await confirmByName(
        name,
        opts,
        'start over',
        `This forgets every subscription and episode action of ${name} (export first: OPML with the web page).`,
      );
      const done = await withDatabase(async (ctx) => transfer.startOver(ctx.db, await userIdOf(ctx, name)));
      console.log(
        `${name} starts over: ${done.records} subscription records and ${done.actions} episode actions forgotten`,
      );
    });
}

/** `castsync user list`: every user, with their subscriptions and role. */
function userList(user: Command): void {
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
}
