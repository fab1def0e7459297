const ESM_ONLY = '(htmlparser2|domhandler|domutils|entities|dom-serializer|domelementtype)';

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
    // sanitize-html's parser (htmlparser2 and its family) is published as ES modules only, which Node loads
    // from CommonJS (require of ES modules) but jest's module system does not: compiled to CommonJS here.
    [`/node_modules/${ESM_ONLY}/.+\\.js$`]: ['ts-jest', { tsconfig: { allowJs: true, module: 'commonjs' } }],
  },
  transformIgnorePatterns: [`/node_modules/(?!${ESM_ONLY}/)`],
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  globalSetup: '<rootDir>/test/global-setup.mjs',
  globalTeardown: '<rootDir>/test/global-teardown.mjs',
  maxWorkers: 2,
  testTimeout: 60_000,
  watchman: false,
};
