import net from 'node:net';

const NOTIFICATION_RESPONSE = 0x41; // 'A'

export type NotificationProxy = {
  /** The database URL, through the proxy. */
  url: string;
  /** While true, the server's notifications are dropped: a LISTEN that never hears. */
  deaf: boolean;
  /** Notifications dropped so far. */
  dropped: () => number;
  stop: () => Promise<void>;
};

/**
 * A loopback TCP proxy in front of PostgreSQL that forwards both ways, except that while `deaf` it drops
 * the server's NotificationResponse messages: what a connection through a transaction-mode pooler, or a
 * half-open one, hears of NOTIFY. The client must not ask for TLS (the server's messages are read as they
 * pass: a type byte and a length each).
 */
export async function notificationProxy(databaseUrl: string): Promise<NotificationProxy> {
  const target = new URL(databaseUrl);
  const sockets = new Set<net.Socket>();
  let dropped = 0;
  const proxy: NotificationProxy = {
    url: '',
    deaf: false,
    dropped: () => dropped,
    stop: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.pipe(upstream);
    let pending = Buffer.alloc(0);
    upstream.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      const passed: Buffer[] = [];
      while (pending.length >= 5 && pending.length >= 1 + pending.readUInt32BE(1)) {
        const message = pending.subarray(0, 1 + pending.readUInt32BE(1));
        pending = pending.subarray(message.length);
        if (message[0] === NOTIFICATION_RESPONSE && proxy.deaf) dropped++;
        else passed.push(message);
      }
      if (passed.length > 0) client.write(Buffer.concat(passed));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxied = new URL(databaseUrl);
  proxied.hostname = '127.0.0.1';
  proxied.port = String((server.address() as net.AddressInfo).port);
  proxy.url = proxied.toString();
  return proxy;
}
