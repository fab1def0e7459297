import fs from 'node:fs';
import path from 'node:path';

// castsync's version, from package.json (beside dist/ and src/ alike): shown by `castsync --version`,
// /healthz and the web page's footer, and written into backups.
export const VERSION: string = (
  JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }
).version;
