import { readFileSync } from 'node:fs';
import path from 'node:path';

const root = path.join(__dirname, '..', '..');
const read = (f: string) => readFileSync(path.join(root, f), 'utf8');

describe('deployment files', () => {
  test('the image starts with the same `npm start` (node dist/server.js) that the process tests run', () => {
    const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
    // exec: npm's shell is replaced by node, so that npm waits for node's own exit after a signal.
    expect(pkg.scripts.start).toMatch(/^exec env ([A-Z_]+=\S+ )+node (--[a-z-]+(=\S+)? )*dist\/server\.js$/);
    expect(read('Dockerfile')).toMatch(/^CMD \["npm", "start"/m);
    expect(read('test/helpers/process.ts')).toContain('pkg.scripts.start.split');
    expect(read('Dockerfile')).toMatch(/^ENV[\s\S]*MALLOC_ARENA_MAX=2/m);
  });

  test('the image runs as a non-root user, with a health check on /readyz, and ships the migrations', () => {
    const dockerfile = read('Dockerfile');
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK .*\n.*\/readyz/m);
    expect(dockerfile).toMatch(/^COPY .*migrations \.\/migrations$/m);
  });

  test('compose runs the app against PostgreSQL 16 with health checks, a volume and config through the environment', () => {
    const compose = read('docker-compose.yml');
    expect(compose).toMatch(/image: postgres:16/);
    expect(compose.match(/healthcheck:/g)).toHaveLength(2);
    expect(compose).toMatch(/condition: service_healthy/);
    expect(compose).toMatch(/DATABASE_URL: postgres:\/\//);
    expect(compose).toMatch(/pgdata:\/var\/lib\/postgresql\/data/);
  });
});
