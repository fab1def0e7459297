import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDirForFile } from '../helpers/tmp';

// Two libraries take memory from the moment they are loaded and serve what most instances seldom do: sharp
// (artwork thumbnails, about 18 MiB) and web-push (notifications to browsers, about 10). The server loads
// them when first needed, not at start (docs/performance.md). Its whole import graph is loaded by starting
// the built server with a setting it refuses: it exits before it listens, after every import.

const tmp = tempDirForFile('castsync-lazy-');
const packagesLoaded = (): string[] => {
  const dir = mkdtempSync(join(tmp, 'run-'));
  const preload = join(dir, 'loaded.cjs');
  writeFileSync(
    preload,
    `process.on('exit', () => {
       const names = new Set();
       for (const file of Object.keys(require.cache)) {
         const m = /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(file);
         if (m) names.add(m[1]);
       }
       require('fs').writeSync(1, 'LOADED ' + JSON.stringify([...names]) + '\\n');
     });`,
  );
  const run = spawnSync(process.execPath, ['--require', preload, 'dist/server.js'], {
    env: { ...process.env, PORT: 'not-a-port', DATA_DIR: dir },
    encoding: 'utf8',
  });
  expect(run.stderr).toContain('Invalid PORT');
  const line = run.stdout.split('\n').find((l) => l.startsWith('LOADED '));
  return JSON.parse(line!.slice('LOADED '.length)) as string[];
};

test('the server starts without sharp and web-push loaded, and with what it serves by', () => {
  const loaded = packagesLoaded();
  expect(loaded).toEqual(expect.arrayContaining(['express', 'pg', 'zod', 'sanitize-html']));
  expect(loaded.filter((name) => name === 'sharp' || name === 'web-push')).toEqual([]);
});
