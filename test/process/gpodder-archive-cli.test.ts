import fs from 'node:fs';
import path from 'node:path';
import { freshDatabase } from '../helpers/db';
import { realisticMembers, writeArchive } from '../helpers/gpodder-archive';
import { cli } from '../helpers/process';

// `npm run cli -- import gpodder-archive FILE USER [--dry-run]` as an operator runs it: 0 when everything
// came, 2 when some entries were refused (each listed with why), 1 with one line and nothing written.

let env: Record<string, string>;
let drop: () => Promise<void>;
beforeAll(async () => {
  const db = await freshDatabase();
  env = { DATABASE_URL: db.url };
  drop = db.drop;
  expect(cli(['user', 'add', 'alice', '--password-stdin'], env, 'alice-password\n').status).toBe(0);
});
afterAll(() => drop());

const subscriptionsOf = () => /^alice\t(\d+) subscriptions/m.exec(cli(['user', 'list'], env).stdout)?.[1];

test('a dry run, then the import: what was refused is listed, exit 2; the second run adds nothing', () => {
  const file = writeArchive(realisticMembers());
  const preview = cli(['import', 'gpodder-archive', file, 'alice', '--dry-run'], env);
  expect(preview.status).toBe(2);
  expect(preview.stdout).toMatch(
    /^Dry run: nothing was changed\. the gpodder\.net archive .* into alice would bring:$/m,
  );
  expect(subscriptionsOf()).toBe('0');

  const done = cli(['import', 'gpodder-archive', file, 'alice'], env);
  expect(done.status).toBe(2);
  expect(done.stdout).toMatch(/^ {2}feeds: 2 new of 2/m);
  expect(done.stdout).toMatch(/^ {2}1 feeds removed on the remote were not imported$/m);
  expect(done.stdout).toMatch(/^ {2}devices: 4 new of 4: .*gpodder\.net-3f2b8a1e \(gpodder\.net history of device/m);
  // The flattr (no rule for it here) and the play with no position.
  expect(done.stdout).toMatch(/^ {4}actions: action 2: action: one of download, play, delete, new$/m);
  expect(done.stdout).toMatch(/^ {4}actions: action 3: .*position/m);
  expect(subscriptionsOf()).toBe('2');

  const again = cli(['import', 'gpodder-archive', file, 'alice'], env);
  expect(again.stdout).toMatch(/^ {2}nothing new: everything it holds is here already$/m);
});

test('an archive castsync takes whole exits 0; a damaged one exits 1 with one line, nothing written', () => {
  const clean = writeArchive(realisticMembers({ clean: true }));
  expect(cli(['import', 'gpodder-archive', clean, 'alice'], env).status).toBe(0);

  const bytes = fs.readFileSync(clean);
  const damaged = path.join(path.dirname(clean), 'damaged.tar.zstd');
  fs.writeFileSync(damaged, bytes.subarray(0, Math.floor(bytes.length / 2)));
  const before = subscriptionsOf();
  const refused = cli(['import', 'gpodder-archive', damaged, 'alice'], env);
  expect(refused).toMatchObject({ status: 1, stdout: '' });
  expect(refused.stderr).toMatch(/^castsync: Not a gpodder\.net archive: [^\n]+\n$/);
  expect(subscriptionsOf()).toBe(before);
});
