// Writes the app-store submissions of castsync (docs/listing/README.md) from the files under deploy/ and
// docs/listing/, with what only a release knows filled in: the published image and the project's
// addresses. The files themselves name no image registry and no address that does not exist yet.
//
//   node scripts/listing.mjs --image ghcr.io/OWNER/castsync:1.0.0@sha256:... \
//     --home https://FORGE/OWNER/castsync --files https://RAW-FILES-OF/OWNER/castsync/main \
//     --contact castsync@example.org --out listing-out
//
// --image: the published image (Umbrel wants it pinned by digest); --home: the project's page and git
// repository; --files: where the repository's files are served as they are (icons, screenshots);
// --contact: the maintainers' address. Cloudron's versions file gets this version, with that image.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

const root = path.join(path.dirname(new URL(import.meta.url).pathname), '..');
/** The listing's files, relative to the repository; text files get the values, others are copied. */
const SOURCES = [
  'deploy/casaos',
  'deploy/umbrel',
  'deploy/cloudron',
  'deploy/truenas',
  'deploy/portainer',
  'docs/listing',
];
const BINARY = /\.(png|jpe?g|webp)$/;

const { values } = parseArgs({
  options: {
    image: { type: 'string' },
    home: { type: 'string' },
    files: { type: 'string' },
    contact: { type: 'string' },
    out: { type: 'string' },
  },
});
for (const name of ['image', 'home', 'files', 'contact', 'out'])
  if (!values[name]) throw new Error(`--${name} is required (see the head of scripts/listing.mjs)`);

const image = values.image;
const named = /^(?<repository>.+?)(?::(?<tag>[^:@/]+))?(?:@(?<digest>sha256:[0-9a-f]{64}))?$/.exec(image);
if (!named?.groups?.tag) throw new Error(`--image needs a tag: ${image}`);
const vars = {
  CASTSYNC_IMAGE: image,
  CASTSYNC_IMAGE_REPOSITORY: named.groups.repository,
  CASTSYNC_IMAGE_TAG: named.groups.tag,
  CASTSYNC_HOME: values.home.replace(/\/$/, ''),
  CASTSYNC_FILES: values.files.replace(/\/$/, ''),
  CASTSYNC_CONTACT: values.contact,
};
/** `${NAME}` and `${NAME:-default}` of the variables above become their values. */
const fill = (text) =>
  text.replace(/\$\{(CASTSYNC_[A-Z_]+)(:-[^}]*)?\}/g, (all, name) => (name in vars ? vars[name] : all));

const files = (dir) =>
  readdirSync(path.join(root, dir)).flatMap((entry) => {
    const rel = path.join(dir, entry);
    return statSync(path.join(root, rel)).isDirectory() ? files(rel) : [rel];
  });
for (const rel of SOURCES.flatMap(files)) {
  const to = path.join(values.out, rel);
  mkdirSync(path.dirname(to), { recursive: true });
  if (BINARY.test(rel)) copyFileSync(path.join(root, rel), to);
  else
    writeFileSync(to, fill(readFileSync(path.join(root, rel), 'utf8')), { mode: statSync(path.join(root, rel)).mode });
}

// Cloudron's versions file: this version's manifest, its file:// texts inlined, with the image.
const cloudron = path.join(values.out, 'deploy/cloudron');
const manifest = JSON.parse(readFileSync(path.join(cloudron, 'CloudronManifest.json'), 'utf8'));
for (const field of ['description', 'changelog', 'postInstallMessage']) {
  const file = /^file:\/\/(.+)$/.exec(manifest[field] ?? '');
  if (file) manifest[field] = readFileSync(path.join(cloudron, file[1]), 'utf8').trim();
}
const versionsFile = path.join(cloudron, 'CloudronVersions.json');
const catalog = JSON.parse(readFileSync(versionsFile, 'utf8'));
const now = new Date();
catalog.versions[manifest.version] = {
  manifest: { ...manifest, dockerImage: image },
  creationDate: catalog.versions[manifest.version]?.creationDate ?? now.toISOString(),
  ts: now.getTime(),
  publishState: 'published',
};
writeFileSync(versionsFile, `${JSON.stringify(catalog, null, 2)}\n`);
console.log(`the listing, for ${image}, is in ${values.out}`);
