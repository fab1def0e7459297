import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { root } from '../helpers/tools';

// The commands the README, docs/ and the deployment files show (`npm run cli -- user add alice --admin`,
// `node dist/cli/index.js user add NAME`) exist as written: each command, then each option, is one the
// CLI defines.

const places = ['README.md', 'CONTRIBUTING.md', 'docs', 'deploy', 'docker-compose.yml'];
const shown = execFileSync('git', ['ls-files', ...places], { cwd: root, encoding: 'utf8' })
  .split('\n')
  .filter((f) => /\.(md|ya?ml|json|sh)$/.test(f))
  .flatMap((f) =>
    [
      ...readFileSync(path.join(root, f), 'utf8').matchAll(
        /(?:npm run cli --|node dist\/cli\/index\.js) ([^`\n#<"|]*)/g,
      ),
    ].map((m) => ({ file: f, words: m[1]!.trim().split(/\s+/) })),
  );

// The program as src/cli/index.ts builds it, without running it.
const parse = jest.spyOn(Command.prototype, 'parseAsync').mockResolvedValue(undefined as never);
// eslint-disable-next-line @typescript-eslint/no-require-imports
require('../../src/cli/index');
const program = parse.mock.contexts[0] as Command;
parse.mockRestore();

/** A command's subcommands, by each of their names and aliases. */
const subcommands = (c: Command) => new Map(c.commands.flatMap((s) => [s.name(), ...s.aliases()].map((n) => [n, s])));
const options = (c: Command) => new Set(['--help', ...c.options.map((o) => o.long)]);

describe('the CLI as the documentation shows it', () => {
  test('the files show commands, and the program is read', () => {
    expect(shown.length).toBeGreaterThan(40);
    expect(program).toBeInstanceOf(Command);
  });

  test.each(shown.map((s) => [s.file, s.words.join(' ')] as const))('%s: %s', (_file, line) => {
    const words = line.split(' ');
    let command = program;
    let n = 0;
    for (; subcommands(command).has(words[n]!); n++) command = subcommands(command).get(words[n]!)!;
    const named = words.slice(0, n).join(' ');
    const rest = words.slice(n);
    // A group named without one of its commands is only allowed as a mention: `token …`.
    if (command.commands.length > 0) {
      expect({ named, rest }).toEqual({ named, rest: rest.filter((w) => /^(…|\.\.\.)$/.test(w)) });
    }
    const given = rest
      .map((w) => w.replace(/^\[/, ''))
      .filter((w) => w.startsWith('--'))
      .map((w) => w.replace(/[=\]].*$/, ''));
    expect({ named, unknown: given.filter((o) => !options(command).has(o)) }).toEqual({ named, unknown: [] });
  });
});
