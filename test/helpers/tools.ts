import { spawnSync } from 'node:child_process';
import path from 'node:path';

/** The repository's root. */
export const root = path.join(__dirname, '..', '..');

/**
 * Runs a tool CI installs (.ci/run) in the repository's root and returns its output; missing, the check
 * fails and says which. quiet: a warning on stderr is a failure too (systemd-analyze exits 0 on a directive
 * it ignores).
 */
export function run(
  tool: string,
  args: string[],
  { quiet = false, input, env }: { quiet?: boolean; input?: string; env?: Record<string, string> } = {},
): string {
  const r = spawnSync(tool, args, { cwd: root, encoding: 'utf8', input, env: { ...process.env, ...env } });
  if (r.error) throw new Error(`${tool} is needed for this check (.ci/run installs it): ${r.error.message}`);
  expect({ tool, args, status: r.status, stderr: r.stderr }).toEqual({
    tool,
    args,
    status: 0,
    stderr: quiet ? '' : expect.any(String),
  });
  return r.stdout;
}
