import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { basicAuth, call, cli, deletionOutcome, startServer } from '../helpers/process';

// "Accepted work is done after a restart" must hold within seconds: kill -9 of the whole process group
// right after a 202 can land while the worker holds the deletion's job, which graphile-worker alone
// would leave locked for 4 hours.

const auth = basicAuth('kim', 'kim-password');
const ROUNDS = 5;

let dataDir: string;
beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'castsync-crash-jobs-'));
  expect(cli(['user', 'add', 'kim', '--password-stdin'], { DATA_DIR: dataDir }, 'kim-password\n').status).toBe(0);
});
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

test(`kill -9 of the group right after a 202, ${ROUNDS} times: each deletion is SUCCESS within 10 s of the restart`, async () => {
  const pending: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const server = await startServer({ DATA_DIR: dataDir });
    for (const id of pending.splice(0)) expect(await deletionOutcome(server.origin, auth, id)).toBe('SUCCESS');
    const posted = await call(server.origin, 'POST', '/v1/subscriptions', auth, {
      subscriptions: [{ feed_url: `https://crash.example/${round}.xml` }],
    });
    const accepted = await call(server.origin, 'DELETE', `/v1/subscriptions/${posted.body.success[0].guid}`, auth);
    expect(accepted.status).toBe(202);
    // A few milliseconds later each round, to land before, in and after the job.
    await new Promise((r) => setTimeout(r, round * 2));
    server.kill('SIGKILL');
    await server.exited;
    pending.push(accepted.body.deletion_id as number);
  }
  const server = await startServer({ DATA_DIR: dataDir });
  try {
    for (const id of pending) expect(await deletionOutcome(server.origin, auth, id)).toBe('SUCCESS');
  } finally {
    server.kill('SIGTERM');
    await server.exited;
  }
});
