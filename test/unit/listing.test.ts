import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Ajv, { type AnySchema } from 'ajv';
import YAML from 'yaml';
import { root, run } from '../helpers/tools';

// castsync's app-store listings (docs/listing/README.md), each checked by its store's own rules: the JSON
// schemas the stores validate with, vendored under test/fixtures/listing (SOURCES.md names their source,
// commit and licence), the rules their linters apply, and `docker-compose config` on every compose file.
// The files are checked as written (the image and the project's addresses as variables) and as
// scripts/listing.mjs fills them in for a submission, with example values.

const EXAMPLE = {
  image: `registry.example/castsync:1.0.0@sha256:${'0'.repeat(64)}`,
  home: 'https://forge.example/castsync/castsync',
  files: 'https://files.example/castsync/main',
  contact: 'castsync@mail.example',
};

let out: string;
beforeAll(() => {
  out = mkdtempSync(path.join(os.tmpdir(), 'castsync-listing-'));
  const r = spawnSync(
    process.execPath,
    ['scripts/listing.mjs', ...Object.entries(EXAMPLE).flatMap(([k, v]) => [`--${k}`, v]), '--out', out],
    { cwd: root, encoding: 'utf8' },
  );
  expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
});
afterAll(() => rmSync(out, { recursive: true, force: true }));

const source = (f: string) => readFileSync(path.join(root, f), 'utf8');
const filled = (f: string) => readFileSync(path.join(out, f), 'utf8');
/** A parsed document, typed as the test reads it. */
const yaml = <T = Compose>(text: string) => YAML.parse(text) as T;
const json = <T>(text: string) => JSON.parse(text) as T;
type Service = {
  image?: string;
  build?: unknown;
  restart?: string;
  container_name?: string;
  depends_on?: Record<string, { condition: string }>;
  volumes?: unknown[];
  healthcheck?: unknown;
  environment?: Record<string, string | number>;
};
type Compose = {
  name?: string;
  services: Record<string, Service>;
  'x-casaos': { main: string; architectures: string[]; icon: string; version: string };
};
type CloudronManifest = Record<string, unknown> & {
  addons: Record<string, unknown>;
  icon: string;
  version: string;
};
type Question = { variable: string; schema: { attrs: { variable: string; schema: { enum: { value: string }[] } }[] } };
const fixture = (name: string) => JSON.parse(source(`test/fixtures/listing/${name}`)) as AnySchema;

/** A validator with the formats the stores' schemas name (ajv knows none by itself). */
function validator(): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: false });
  const url = (s: string) => {
    try {
      return ['http:', 'https:'].includes(new URL(s).protocol);
    } catch {
      return false;
    }
  };
  ajv.addFormat('uri', url);
  // cloudron-manifestformat's own formats (manifestformat.js), as it defines them.
  ajv.addFormat('semver', /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/);
  ajv.addFormat(
    'reverseDomain',
    (s: string) => s.split('.').length > 1 && s.split('.').every((p) => /^[a-z0-9][-a-z0-9_]*$/.test(p)),
  );
  ajv.addFormat('email', /^[^\s@]+@[^\s@]+\.[^\s@]+$/);
  ajv.addFormat('byteString', /^((-|\+)?(\d+(?:\.\d+)?)) *(kb|mb|gb|tb)$/i);
  ajv.addFormat('cronpattern', (s: string) => s.startsWith('@') || s.split(' ').length === 5);
  // tv4 applies this one to the port maps (objects), which ajv's formats never see: the Cloudron test
  // checks castsync has no such map.
  ajv.addFormat('envvar', () => true);
  return ajv;
}

/** The errors of `data` against `schema`: none is what every test wants. */
function errors(schema: AnySchema, data: unknown): unknown {
  const ajv = validator();
  const validate = ajv.compile(schema);
  return validate(data) ? [] : validate.errors;
}

/** tv4's banUnknownProperties, which cloudron-manifestformat validates with: an object schema that says
 * nothing of other properties allows none. */
function banUnknown(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(banUnknown);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, banUnknown(v)]));
  const isObject = out.type === 'object' || 'properties' in out || 'patternProperties' in out;
  if (isObject && !('additionalProperties' in out)) out.additionalProperties = false;
  return out;
}

/** A PNG's width and height, from its header. */
function pngSize(file: string): [number, number] {
  const b = readFileSync(path.join(root, file));
  expect(b.subarray(1, 4).toString('latin1')).toBe('PNG');
  return [b.readUInt32BE(16), b.readUInt32BE(20)];
}

/** docker-compose (CI installs it) reads the compose text. Its v1 predates the top-level `name` (CasaOS
 * requires it; the store checks it with its own pattern, the schema here does too): it is left out. */
function composeConfig(text: string, env: Record<string, string> = {}): void {
  const rest: Partial<Compose> = { ...yaml(text) };
  delete rest.name;
  run('docker-compose', ['-f', '-', 'config', '-q'], { input: YAML.stringify(rest), env });
}

test('the listing files name no image registry: the image is the variable CASTSYNC_IMAGE everywhere', () => {
  const files = [
    'deploy/casaos/docker-compose.yml',
    'deploy/umbrel/castsync/docker-compose.yml',
    'deploy/portainer/docker-compose.yml',
  ];
  for (const file of files) {
    const services = yaml(source(file)).services;
    const images = Object.values(services)
      .map((s) => s.image)
      .filter((i): i is string => !!i && !i.startsWith('postgres:'));
    expect({ file, images }).toEqual({
      file,
      images: [expect.stringMatching(/^\$\{CASTSYNC_IMAGE(:-castsync:[0-9.]+)?\}$/)],
    });
  }
  expect(source('deploy/cloudron/Dockerfile')).toMatch(
    /^ARG CASTSYNC_IMAGE=castsync:[0-9.]+\nFROM \$\{CASTSYNC_IMAGE\}$/m,
  );
  expect(source('deploy/truenas/ix-dev/community/castsync/ix_values.yaml')).toContain(
    'repository: ${CASTSYNC_IMAGE_REPOSITORY}\n    tag: ${CASTSYNC_IMAGE_TAG}',
  );
  for (const file of [...files, 'deploy/portainer/templates.json', 'deploy/cloudron/CloudronManifest.json'])
    expect({ file, registry: /ghcr\.io|docker\.io|quay\.io/.test(source(file)) }).toEqual({ file, registry: false });
  // Filled in, the submission has the image.
  expect(yaml(filled('deploy/casaos/docker-compose.yml')).services.castsync!.image).toBe(EXAMPLE.image);
});

test('every listing names the version package.json has (docs/releasing.md)', () => {
  const { version } = json<{ version: string }>(source('package.json'));
  const casaos = yaml(source('deploy/casaos/docker-compose.yml'));
  const cloudron = json<CloudronManifest>(source('deploy/cloudron/CloudronManifest.json'));
  const truenas = yaml<Record<string, unknown>>(source('deploy/truenas/ix-dev/community/castsync/app.yaml'));
  expect({
    casaos: casaos['x-casaos'].version,
    casaosImage: casaos.services.castsync!.image,
    umbrel: yaml<{ version: string }>(source('deploy/umbrel/castsync/umbrel-app.yml')).version,
    cloudron: [cloudron.version, cloudron.upstreamVersion],
    cloudronChangelog: source('deploy/cloudron/CHANGELOG').includes(`[${version}]`),
    cloudronImage: /^ARG CASTSYNC_IMAGE=castsync:(.+)$/m.exec(source('deploy/cloudron/Dockerfile'))?.[1],
    truenas: truenas.app_version,
    portainer: yaml(source('deploy/portainer/docker-compose.yml')).services.castsync!.image,
  }).toEqual({
    casaos: version,
    casaosImage: `\${CASTSYNC_IMAGE:-castsync:${version}}`,
    umbrel: version,
    cloudron: [version, version],
    cloudronChangelog: true,
    cloudronImage: version,
    truenas: version,
    portainer: `\${CASTSYNC_IMAGE:-castsync:${version}}`,
  });
});

test('CasaOS: the store v2 rules (name, a reverse-domain id, main, port_map, icon, title, category, version, both architectures) and docker-compose config', () => {
  for (const text of [source('deploy/casaos/docker-compose.yml'), filled('deploy/casaos/docker-compose.yml')]) {
    const compose = yaml(text);
    expect(errors(fixture('casaos-compose-schema.json'), compose)).toEqual([]);
    expect(Object.keys(compose.services)).toContain(compose['x-casaos'].main);
    expect(compose['x-casaos'].architectures).toEqual(['amd64', 'arm64']);
    composeConfig(text);
  }
  // Both architectures are what the release builds; the icon is the one the store's folder will hold.
  expect(source('.github/workflows/release.yml')).toMatch(/platforms: linux\/amd64,linux\/arm64/);
  expect(yaml(source('deploy/casaos/docker-compose.yml'))['x-casaos'].icon).toMatch(/\/Apps\/castsync\/icon\.svg$/);
  expect(source('docs/listing/icon/castsync.svg')).toMatch(/^<svg [^>]*viewBox="0 0 512 512"/);
});

test("Umbrel: umbrel-app.yml and the compose file by the rules of umbrel-apps' linter; the sync paths pass its login", () => {
  const manifest = yaml<{ id: string }>(filled('deploy/umbrel/castsync/umbrel-app.yml'));
  expect(errors(fixture('umbrel-app-schema.json'), manifest)).toEqual([]);
  expect(manifest.id).toBe('castsync');
  const text = filled('deploy/umbrel/castsync/docker-compose.yml');
  const compose = yaml(text);
  const { app_proxy: proxy, ...services } = compose.services;
  // lintComposeRoot, lintServiceImage, lintServiceRestart, lintServiceDependencies, lintServiceVolumes.
  expect(Object.keys(compose).filter((k) => k === 'volumes' || k === 'networks')).toEqual([]);
  for (const [name, s] of Object.entries(services)) {
    expect({ name, image: s.image }).toEqual({
      name,
      image: expect.stringMatching(/^.+:[^:@/]+@sha256:[a-f0-9]{64}$/),
    });
    expect({ name, build: s.build, restart: s.restart, container_name: s.container_name }).toEqual({
      name,
      restart: 'on-failure',
    });
    for (const [dep, { condition }] of Object.entries(s.depends_on ?? {}) as [string, { condition: string }][])
      if (condition === 'service_healthy') expect(services[dep]?.healthcheck).toBeDefined();
    for (const volume of s.volumes ?? []) {
      expect(typeof volume).toBe('string');
      const from = /^\$\{APP_DATA_DIR\}\/(.+):/.exec(String(volume))![1]!;
      expect(existsSync(path.join(root, 'deploy/umbrel/castsync', from))).toBe(true);
    }
  }
  // lintAppProxy: APP_HOST names a service of this app, the port is a number, the login is on, and the
  // paths let through it are narrow: the sync APIs, never the web page.
  const env = proxy!.environment!;
  expect(['server', 'castsync_server_1']).toContain(env.APP_HOST);
  expect(String(env.APP_PORT)).toMatch(/^\d+$/);
  expect(env.PROXY_AUTH_ADD).toBe('true');
  const open = String(env.PROXY_AUTH_WHITELIST).split(',');
  expect(open.filter((p) => ['/', '/*', '/**'].includes(p))).toEqual([]);
  const passes = (p: string) => open.some((o) => new RegExp(`^${o.replace(/\*/g, '.*')}$`).test(p));
  const sync = [
    '/api/2/episodes/alice.json',
    '/api/v1/sync/changes',
    '/index.php/apps/gpoddersync/episode_action',
    '/index.php/login/v2',
    '/index.php/login/v2/poll',
    '/apps/gpoddersync/subscriptions',
    '/login/v2',
    '/v1/subscriptions',
    '/subscriptions/alice.opml',
  ];
  expect(sync.filter((p) => !passes(p))).toEqual([]);
  expect(['/', '/web/', '/web/app-passwords', '/metrics'].filter(passes)).toEqual([]);
  // umbrelOS gives app_proxy its image and the app its environment.
  const withProxy = YAML.stringify({
    ...compose,
    services: { ...compose.services, app_proxy: { ...proxy, image: 'getumbrel/app-proxy' } },
  });
  composeConfig(withProxy, { APP_DATA_DIR: '/tmp/castsync', APP_PASSWORD: 'secret' });
});

test("Cloudron: the manifest and the versions file by cloudron-manifestformat's schema, with the PostgreSQL addon", () => {
  const schema = banUnknown(fixture('cloudron-manifest-schema.json')) as AnySchema;
  const manifest = json<CloudronManifest>(filled('deploy/cloudron/CloudronManifest.json'));
  expect(errors(schema, manifest)).toEqual([]);
  expect(manifest.addons.postgresql).toEqual({});
  expect([manifest.tcpPorts, manifest.udpPorts, manifest.httpPorts]).toEqual([undefined, undefined, undefined]);
  // checkAppstoreRequirements: the fields a published app must fill (the image is per version, below).
  for (const field of [
    'id',
    'title',
    'description',
    'tagline',
    'website',
    'contactEmail',
    'author',
    'tags',
    'icon',
    'changelog',
    'mediaLinks',
    'healthCheckPath',
  ])
    expect({ field, empty: !manifest[field] || (manifest[field] as unknown[]).length === 0 }).toEqual({
      field,
      empty: false,
    });
  expect(pngSize(`deploy/cloudron/${manifest.icon.replace('file://', '')}`)).toEqual([256, 256]);
  for (const field of ['description', 'changelog', 'postInstallMessage'])
    expect(existsSync(path.join(root, 'deploy/cloudron', String(manifest[field]).replace('file://', '')))).toBe(true);

  expect(JSON.parse(source('deploy/cloudron/CloudronVersions.json'))).toEqual({ stable: true, versions: {} });
  const versions = json<{ versions: Record<string, { manifest: CloudronManifest }> }>(
    filled('deploy/cloudron/CloudronVersions.json'),
  );
  const entry = versions.versions[manifest.version]!;
  expect(entry).toMatchObject({ publishState: 'published', ts: expect.any(Number), creationDate: expect.any(String) });
  expect(errors(schema, entry.manifest)).toEqual([]);
  expect(entry.manifest).toMatchObject({
    dockerImage: EXAMPLE.image,
    description: expect.stringContaining('castsync'),
  });
  // The start script starts node as the image does, with Cloudron's settings.
  const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(source('Dockerfile'))![1]!) as string[];
  expect(source('deploy/cloudron/start.sh')).toContain(`\nexec ${cmd.join(' ')}\n`);
  expect(statSync(path.join(root, 'deploy/cloudron/start.sh')).mode & 0o111).not.toBe(0);
});

test("TrueNAS: an ix-dev/community app whose app.yaml and item.yaml pass apps_validation's schemas, with the PostgreSQL dependency", () => {
  const dir = 'deploy/truenas/ix-dev/community/castsync';
  for (const f of [
    'app.yaml',
    'item.yaml',
    'ix_values.yaml',
    'questions.yaml',
    'README.md',
    'templates/docker-compose.yaml',
    'templates/test_values/basic-values.yaml',
  ])
    expect({ f, there: existsSync(path.join(root, dir, f)) }).toEqual({ f, there: true });
  const app = yaml<Record<string, unknown>>(filled(`${dir}/app.yaml`));
  expect(errors(fixture('truenas-app-metadata-schema.json'), app)).toEqual([]);
  expect(app).toMatchObject({ name: 'castsync', train: 'community' });
  expect(errors(fixture('truenas-item-schema.json'), yaml<unknown>(filled(`${dir}/item.yaml`)))).toEqual([]);
  // The template's images and the PostgreSQL the library adds are those ix_values.yaml names.
  const values = yaml<{ images: Record<string, unknown> }>(filled(`${dir}/ix_values.yaml`));
  expect(values.images.image).toEqual({ repository: 'registry.example/castsync', tag: '1.0.0' });
  const template = source(`${dir}/templates/docker-compose.yaml`);
  expect(template).toContain('tpl.deps.postgres(');
  const questions = yaml<{ questions: Question[] }>(source(`${dir}/questions.yaml`));
  const own = questions.questions.find((q) => q.variable === 'castsync')!;
  const selector = own.schema.attrs.find((a) => a.variable === 'postgres_image_selector')!;
  for (const { value } of selector.schema.enum) expect(Object.keys(values.images)).toContain(value);
  const test = yaml<{ castsync: Record<string, unknown> }>(source(`${dir}/templates/test_values/basic-values.yaml`));
  expect(Object.keys(test.castsync).sort()).toEqual(own.schema.attrs.map((a) => a.variable).sort());
});

test('Portainer: a v3 stack template by the templates schema, and its stack file by docker-compose', () => {
  const templates = json<{ templates: { env: { name: string }[]; repository: { stackfile: string } }[] }>(
    filled('deploy/portainer/templates.json'),
  );
  expect(errors(fixture('portainer-templates-schema.json'), templates)).toEqual([]);
  const stack = templates.templates[0]!;
  expect(stack).toMatchObject({
    type: 3,
    repository: { url: EXAMPLE.home, stackfile: 'deploy/portainer/docker-compose.yml' },
  });
  const compose = source(stack.repository.stackfile);
  for (const { name } of stack.env) expect(compose).toContain(`\${${name}`);
  composeConfig(compose, { POSTGRES_PASSWORD: 'secret' });
});

test('podcastindex.org/apps: the apps.json entry by its schema, with chapters and transcripts, and its 512×512 icon', () => {
  const entries = json<{ appIconUrl: string; supportedElements: { elementName: string }[] }[]>(
    filled('docs/listing/podcastindex-apps.json'),
  );
  expect(errors(fixture('podcastindex-apps-schema.json'), entries)).toEqual([]);
  expect(entries).toHaveLength(1);
  expect(entries[0]!.supportedElements.map((e) => e.elementName).sort()).toEqual(['Chapters', 'Transcript']);
  expect(entries[0]!.appIconUrl).toBe('castsync.png');
  expect(pngSize('docs/listing/icon/castsync-512.png')).toEqual([512, 512]);
  expect(pngSize('docs/listing/icon/castsync-256.png')).toEqual([256, 256]);
});

test("the texts for AntennaPod's and Music Assistant's documentation say what docs/apps.md says", () => {
  const ma = source('docs/listing/music-assistant.md');
  expect(ma).toMatch(/Device ID/);
  expect(ma).toMatch(/Nextcloud/);
  expect(source('docs/apps.md')).toMatch(/an action uploaded naming no device is the account's/);
  expect(source('docs/listing/antennapod.md').match(/^- \*\*castsync\*\*/gm)).toHaveLength(1);
});
