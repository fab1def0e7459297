import dgram from 'node:dgram';
import ipaddr from 'ipaddr.js';

/**
 * How the server answers a question: addresses (those of the question's type, A or AAAA), no such name, or
 * nothing; `{ after, answer }` answers so `after` ms later.
 */
export type DnsAnswer =
  string[] | 'nxdomain' | 'servfail' | 'silent' | { after: number; answer: string[] | 'nxdomain' | 'servfail' };

export type DnsServer = {
  /** "127.0.0.1:port", for dns.Resolver.setServers. */
  address: string;
  /** The questions asked, as "name A" or "name AAAA", in order. */
  asked: string[];
  close: () => Promise<void>;
};

const A = 1;
const AAAA = 28;

/**
 * A DNS server on a loopback UDP port that answers every question as `answer(name, type)` says: the least of
 * RFC 1035 that a resolver needs (one question, answers pointing back at its name), so that a test decides
 * what the DNS says, or that it never answers.
 */
export async function startDnsServer(answer: (name: string, type: 'A' | 'AAAA') => DnsAnswer): Promise<DnsServer> {
  const socket = dgram.createSocket('udp4');
  const asked: string[] = [];
  let closed = false;
  socket.on('message', (query, from) => {
    const labels: string[] = [];
    let at = 12;
    while (query[at]! > 0) {
      labels.push(query.toString('latin1', at + 1, at + 1 + query[at]!));
      at += 1 + query[at]!;
    }
    const questionEnd = at + 5;
    const qtype = query.readUInt16BE(at + 1);
    const name = labels.join('.');
    const type = qtype === AAAA ? 'AAAA' : qtype === A ? 'A' : undefined;
    if (!type) return;
    asked.push(`${name} ${type}`);
    const given = answer(name, type);
    if (given === 'silent') return;
    const [said, after] = Array.isArray(given) || typeof given === 'string' ? [given, 0] : [given.answer, given.after];
    const addresses = Array.isArray(said) ? said.filter((a) => a.includes(':') === (type === 'AAAA')) : [];
    const header = Buffer.alloc(12);
    header.writeUInt16BE(query.readUInt16BE(0), 0); // the query's id
    const rcode = said === 'nxdomain' ? 3 : said === 'servfail' ? 2 : 0;
    header.writeUInt16BE(0x8180 | rcode, 2); // an answer, recursion available, and its code
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(addresses.length, 6);
    const records = addresses.map((address) => {
      const data = Buffer.from(ipaddr.parse(address).toByteArray());
      const record = Buffer.alloc(12);
      record.writeUInt16BE(0xc00c, 0); // the question's name
      record.writeUInt16BE(qtype, 2);
      record.writeUInt16BE(1, 4); // IN
      record.writeUInt32BE(60, 6);
      record.writeUInt16BE(data.length, 10);
      return Buffer.concat([record, data]);
    });
    const reply = Buffer.concat([header, query.subarray(12, questionEnd), ...records]);
    setTimeout(() => closed || socket.send(reply, from.port, from.address), after);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    asked,
    close: () => new Promise<void>((resolve) => ((closed = true), socket.close(() => resolve()))),
  };
}
