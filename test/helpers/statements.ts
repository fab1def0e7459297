import pg from 'pg';

export type Sent = { text: unknown; values: unknown[] | undefined };

/** The statements this process sends to PostgreSQL (any client, any pool) while fn runs, in order. */
export async function sentStatements(fn: () => Promise<unknown>): Promise<Sent[]> {
  const original = pg.Client.prototype.query;
  const sent: Sent[] = [];
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [config, values] = args as [unknown, unknown[] | undefined];
    sent.push(typeof config === 'object' && config !== null ? (config as Sent) : { text: config, values });
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    await fn();
  } finally {
    pg.Client.prototype.query = original;
  }
  return sent;
}
