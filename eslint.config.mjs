import tseslint from 'typescript-eslint';
import importPlugin from 'eslint-plugin-import';

// The layers (docs/decisions/layers.md). One `no-restricted-imports` entry per folder: flat config keeps
// only the last options given for a rule, so each folder's whole list of forbidden imports is made here.

/** The domain rooms, by floor: a room imports rooms of lower floors only, never its own floor or above. */
const ROOM_FLOORS = [
  ['auth', 'devices', 'subscriptions'],
  ['episodes', 'feeds'],
  ['deletions', 'directory', 'notifications', 'opml', 'stats'],
  ['queue', 'sync'],
  ['transfer'],
];
const ROOMS = ROOM_FLOORS.flat();
const ADAPTERS = ['opa', 'gpodder', 'web', 'cli'];
/** The top-level files that assemble the layers, as a file one folder down (or, with ./, beside them) names them. */
const TOP_FILES = ['app', 'server', 'openapi', 'api-context'];
const TOP = TOP_FILES.map((f) => `../${f}`);
const TOP_BESIDE = TOP_FILES.map((f) => `./${f}`);
const folder = (name) => `**/${name}/*`;

const forbid = (files, groups) => ({
  files,
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: groups
          .filter(([g]) => g.flat().length > 0)
          .map(([group, message]) => ({ group: group.flat(), message })),
      },
    ],
  },
});

/** A room may not import the rooms of its own floor or above. */
const roomRules = ROOM_FLOORS.flatMap((floor, level) =>
  floor.map((room) => {
    const notBelow = ROOM_FLOORS.slice(level)
      .flat()
      .filter((r) => r !== room);
    return forbid(
      [`src/${room}/**`],
      [
        [
          ['**/http/*', ...ADAPTERS.map(folder), ...TOP],
          'Domain code knows no HTTP and no protocol: throw the errors of src/errors.ts, return domain records.',
        ],
        [
          notBelow.map(folder),
          `The domain rooms import downwards only (${ROOM_FLOORS.map((f) => f.join(', ')).join(' < ')}): ` +
            'wire anything else in the composition root (app.ts, server.ts).',
        ],
      ],
    );
  }),
);

/**
 * The seams (docs/decisions/layers.md): a file outside room R, a door, another room or an assembly file,
 * imports R only through R/service.ts, which names what R offers; inside R, files import each other and never
 * their own seam (it imports them: a circle). Checked on the resolved files, so that the door folder
 * opa/sync/ is not taken for the room sync/.
 */
const seamZones = ROOMS.flatMap((room) => [
  {
    target: [`./src/!(${room})/**/*`, './src/*.ts'],
    from: `./src/${room}`,
    except: ['./service.ts'],
    message: `Reach the ${room} room through its seam, ${room}/service.ts, which names what it offers.`,
  },
  {
    target: `./src/${room}`,
    from: `./src/${room}/service.ts`,
    message: `Inside the ${room} room, import the file itself: service.ts is the seam for the others.`,
  },
]);

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'data/'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { project: './tsconfig.json', tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  // No import circles anywhere in src, between files of one folder too (type-only imports included); rooms
  // reached through their seams; no `export *`.
  {
    files: ['src/**/*.ts'],
    plugins: { import: importPlugin },
    settings: {
      'import/resolver': { node: { extensions: ['.ts', '.js'] } },
      'import/extensions': ['.ts', '.js'],
      'import/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    rules: {
      'import/no-cycle': ['error', { ignoreExternal: true }],
      'import/no-restricted-paths': ['error', { basePath: import.meta.dirname, zones: seamZones }],
      // A module says what it exports, by name: `export *` would make a seam whatever its files export.
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportAllDeclaration', message: 'Export names explicitly (export { a, b } from ...).' },
      ],
    },
  },
  // The ground floor knows neither rules nor HTTP; domain rooms know SQL and rules, not HTTP, and import
  // downwards only; HTTP plumbing knows no domain; adapters call services, never repos.
  forbid(
    [
      'src/db/**',
      'src/jobs/**',
      'src/errors.ts',
      'src/files.ts',
      'src/config.ts',
      'src/logger.ts',
      'src/context.ts',
      'src/timestamps.ts',
      'src/addresses.ts',
      'src/text.ts',
      'src/uuid.ts',
      'src/version.ts',
    ],
    [
      [
        [...ROOMS.map(folder), '**/http/*', ...ADAPTERS.map(folder), ...TOP, ...TOP_BESIDE],
        'The ground floor imports nothing above it.',
      ],
    ],
  ),
  ...roomRules,
  forbid(
    ['src/http/**'],
    [[[...ROOMS.map(folder), ...ADAPTERS.map(folder), ...TOP], 'HTTP plumbing knows no domain and no protocol.']],
  ),
  forbid(
    ADAPTERS.map((a) => `src/${a}/**`),
    [[['**/repo', '**/*-repo', '**/plan'], 'Adapters call domain services, never repos.']],
  ),
  // A seam only names what its room's files export: no logic of its own, nothing else to read.
  {
    files: ROOMS.map((room) => `src/${room}/service.ts`),
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportAllDeclaration', message: 'Export names explicitly (export { a, b } from ...).' },
        {
          selector: 'Program > :not(ExportNamedDeclaration[source])',
          message:
            "A room's service.ts is its seam: only `export { ... } from './file'`; the logic goes in a named file.",
        },
      ],
    },
  },
  // A domain function is read at once: at most 50 lines (blank lines and comments not counted).
  {
    files: ROOMS.map((room) => `src/${room}/**/*.ts`),
    rules: { 'max-lines-per-function': ['error', { max: 50, skipBlankLines: true, skipComments: true }] },
  },
  // A route function is read at once too, and so is any function of a door, of the HTTP plumbing or of the
  // composition root: at most 60 lines; longer, its routes or steps become named functions, a door's resource
  // a folder of short route files (docs/decisions/layers.md, CONTRIBUTING.md).
  {
    files: [...ADAPTERS.map((a) => `src/${a}/**/*.ts`), 'src/http/**/*.ts', 'src/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }] },
  },
);
