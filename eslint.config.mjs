import tseslint from 'typescript-eslint';

/** Import patterns (gitignore-style, matched against the import path) that a layer must not use. */
const forbid = (files, groups, message) => ({
  files,
  rules: { 'no-restricted-imports': ['error', { patterns: [{ group: groups, message }] }] },
});

const DOMAIN = [
  '**/auth/*',
  '**/subscriptions/*',
  '**/deletions/*',
  '**/devices/*',
  '**/opml/*',
  '**/episodes/*',
  '**/feeds/*',
];
const ADAPTERS = ['**/opa/*', '**/gpodder/*', '**/web/*'];
/** The top-level files that assemble the layers, as a file one folder down (or, with ./, beside them) names them. */
const TOP_FILES = ['app', 'server', 'cli', 'openapi', 'api-context'];
const TOP = TOP_FILES.map((f) => `../${f}`);
const TOP_BESIDE = TOP_FILES.map((f) => `./${f}`);

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
  // The layers (docs/decisions/layers.md): the ground floor knows neither rules nor HTTP; domain folders
  // know SQL and rules, not HTTP; HTTP plumbing knows no domain; adapters call services, never repos.
  forbid(
    ['src/db/**', 'src/jobs/**', 'src/errors.ts', 'src/config.ts', 'src/logger.ts', 'src/context.ts'],
    [...DOMAIN, '**/http/*', ...ADAPTERS, ...TOP, ...TOP_BESIDE],
    'The ground floor imports nothing above it.',
  ),
  forbid(
    [
      'src/auth/**',
      'src/subscriptions/**',
      'src/deletions/**',
      'src/devices/**',
      'src/opml/**',
      'src/episodes/**',
      'src/feeds/**',
    ],
    ['**/http/*', ...ADAPTERS, ...TOP],
    'Domain code knows no HTTP and no protocol: throw the errors of src/errors.ts, return domain records.',
  ),
  forbid(['src/http/**'], [...DOMAIN, ...ADAPTERS, ...TOP], 'HTTP plumbing knows no domain and no protocol.'),
  forbid(
    ['src/opa/**', 'src/gpodder/**', 'src/web/**', 'src/cli.ts'],
    ['**/repo', '**/*-repo', '**/plan'],
    'Adapters call domain services, never repos.',
  ),
);
