import tseslint from 'typescript-eslint';
import importPlugin from 'eslint-plugin-import';

// The layers (docs/decisions/layers.md). One `no-restricted-imports` entry per folder: flat config keeps
// only the last options given for a rule, so each folder's whole list of forbidden imports is made here.

/** The domain rooms, by floor: a room imports rooms of lower floors only, never its own floor or above. */
const ROOM_FLOORS = [
  ['auth', 'devices', 'subscriptions'],
  ['episodes', 'feeds'],
  ['deletions', 'directory', 'opml', 'stats'],
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
  // No import circles anywhere in src, between files of one folder too (type-only imports included).
  {
    files: ['src/**/*.ts'],
    plugins: { import: importPlugin },
    settings: {
      'import/resolver': { node: { extensions: ['.ts', '.js'] } },
      'import/extensions': ['.ts', '.js'],
      'import/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    rules: { 'import/no-cycle': ['error', { ignoreExternal: true }] },
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
  // A domain function is read at once: at most 50 lines (blank lines and comments not counted).
  {
    files: ROOMS.map((room) => `src/${room}/**/*.ts`),
    rules: { 'max-lines-per-function': ['error', { max: 50, skipBlankLines: true, skipComments: true }] },
  },
);
