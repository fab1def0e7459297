import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { root } from '../helpers/tools';

// The links a reader follows: between the Markdown files, to files of the repository, and the
// `docs/<name>.md#<anchor>` a comment or a message names. A renamed file or heading breaks them silently.

const tracked = execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' })
  .split('\n')
  .filter((f) => f !== '' && !f.startsWith('test/fixtures/'));
const text = (f: string) => readFileSync(path.join(root, f), 'utf8');
/** Markdown without its code blocks, where a `](…)` or a `#` line is no link or heading. */
const prose = (f: string) => text(f).replace(/^```[\s\S]*?^```/gm, '');

/** GitHub's anchors of a Markdown file's headings: lower case, punctuation dropped, spaces as `-`, repeats numbered. */
function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of prose(file).matchAll(/^#{1,6}\s+(.*)$/gm)) {
    const words = heading!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/`/g, '');
    const slug = words
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug);
    seen.set(slug, (n ?? -1) + 1);
    anchors.add(n === undefined ? slug : `${slug}-${n + 1}`);
  }
  return anchors;
}

/** What is wrong with `from`'s link to `target#anchor`, relative to `base`'s folder, or null. */
function broken(from: string, link: string, base = from): string | null {
  const [target, anchor] = link.split('#') as [string, string | undefined];
  const file = target === '' ? from : path.posix.normalize(path.posix.join(path.posix.dirname(base), target));
  if (!existsSync(path.join(root, file))) return `${from}: ${link}: no file ${file}`;
  if (anchor !== undefined && file.endsWith('.md') && !anchorsOf(file).has(anchor)) {
    return `${from}: ${link}: no heading #${anchor} in ${file}`;
  }
  return null;
}

describe('links in the documentation', () => {
  test('every relative Markdown link points at a file of the repository, and at a heading of it', () => {
    const markdown = tracked.filter((f) => f.endsWith('.md'));
    expect(markdown.length).toBeGreaterThan(20);
    const wrong = markdown.flatMap((f) =>
      [...prose(f).matchAll(/\]\(([^)\s]+)\)/g)]
        .map((m) => m[1]!)
        // Absolute links, and the store listings' placeholders (`${CASTSYNC_HOME}`, filled in by scripts/listing.mjs).
        .filter((link) => !/^([a-z]+:|\$\{)/.test(link))
        .map((link) => broken(f, link)),
    );
    expect(wrong.filter((w) => w !== null)).toEqual([]);
  });

  test('every docs/<name>.md#<anchor> named in a file (comments, messages, settings) has that heading', () => {
    const wrong = tracked
      .filter((f) => !/\.(png|svg|jpg|ico|woff2?|zst|tar)$/.test(f) && f !== 'package-lock.json')
      .flatMap((f) =>
        [...text(f).matchAll(/(?<![\w/.-])docs\/[\w/-]+\.md#[\w-]+/g)].map((m) => broken(f, m[0], 'README.md')),
      );
    expect(wrong.filter((w) => w !== null)).toEqual([]);
  });
});
