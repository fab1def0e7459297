import readline from 'node:readline';
import { InvalidInput } from '../errors';

/** All of standard input as text, without the one line end a shell's echo or a file adds. */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/**
 * One line typed on the terminal without echo: raw mode hands over each key as it is typed and shows
 * none of them, so only the prompt is written. Enter ends the line, Backspace takes a character back,
 * Ctrl-C cancels.
 */
function askHidden(prompt: string): Promise<string> {
  const input = process.stdin;
  return new Promise<string>((resolve, reject) => {
    let typed: string[] = [];
    const finish = (err?: Error) => {
      input.off('data', onKeys);
      input.setRawMode(false);
      input.pause();
      process.stderr.write('\n');
      if (err) reject(err);
      else resolve(typed.join(''));
    };
    const onKeys = (keys: string) => {
      for (const key of keys) {
        if (key === '\r' || key === '\n' || key === '\u0004') return finish();
        if (key === '\u0003') return finish(new InvalidInput('Cancelled: nothing was changed'));
        if (key === '\u007f' || key === '\b') typed = typed.slice(0, -1);
        else if (key >= ' ') typed.push(key);
      }
    };
    input.setEncoding('utf8');
    input.setRawMode(true);
    // The prompt once the terminal no longer shows what is typed: a password typed as soon as it is asked
    // for is not shown either.
    process.stderr.write(prompt);
    input.on('data', onKeys);
    input.resume();
  });
}

/**
 * A password: all of standard input when it is no terminal (a pipe or a file); on a terminal, typed unseen
 * (twice unless `repeat` is false), with --password-stdin too, which would otherwise show what is typed
 * and wait for Ctrl-D without a prompt.
 */
export async function readPassword({ repeat = true } = {}): Promise<string> {
  if (!process.stdin.isTTY) return readStdin();
  const first = await askHidden('Password: ');
  if (repeat && (await askHidden('Repeat password: ')) !== first) {
    throw new InvalidInput('The passwords do not match');
  }
  return first;
}

/** One line typed on the terminal, shown as it is typed; Ctrl-C, or Ctrl-D before Enter, cancels. */
export async function askLine(prompt: string): Promise<string> {
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
  return new Promise<string>((resolve, reject) => {
    let answered = false;
    rl.on('SIGINT', () => rl.close());
    rl.on('close', () => {
      if (answered) return;
      process.stderr.write('\n');
      reject(new InvalidInput('Cancelled: nothing was changed'));
    });
    rl.question(prompt, (answer) => {
      answered = true;
      rl.close();
      resolve(answer.trim());
    });
  });
}

/** Progress on a terminal: one line, rewritten in place. */
export function terminalProgress(): ((step: string, done?: number, total?: number) => void) & { end: () => void } {
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
