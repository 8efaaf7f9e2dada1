/**
 * A TCP proxy in front of the API server that can make the watch connections open at a moment
 * go silent (a black hole: bytes are dropped, the socket stays open), as a stuck load balancer or
 * half-dead connection would. New connections pass untouched.
 */
import net from 'node:net';

export interface FreezableProxy {
  port: number;
  url: string;
  /** Silences every currently open watch connection; returns how many. */
  freezeWatches(): number;
  /** Silences every open connection, idle keep-alive ones too (a request sent on one hangs). */
  freezeAll(): number;
  stop(): Promise<void>;
}

interface Conn {
  client: net.Socket;
  upstream: net.Socket;
  frozen: boolean;
  watch: boolean;
}

export async function startFreezableProxy(targetPort: number): Promise<FreezableProxy> {
  const conns = new Set<Conn>();
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    const c: Conn = { client, upstream, frozen: false, watch: false };
    conns.add(c);
    client.on('data', (d) => {
      // A watch is a GET whose query has watch=true (keep-alive sockets carry many requests).
      const head = d.subarray(0, 2048).toString('latin1');
      if (/^GET [^\r\n]*[?&]watch=true/m.test(head)) c.watch = true;
      upstream.write(d);
    });
    upstream.on('data', (d) => {
      if (!c.frozen) client.write(d);
    });
    const close = () => {
      conns.delete(c);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    freezeWatches() {
      let n = 0;
      for (const c of conns) {
        if (c.watch && !c.frozen) {
          c.frozen = true;
          n++;
        }
      }
      return n;
    },
    freezeAll() {
      let n = 0;
      for (const c of conns) {
        if (!c.frozen) {
          c.frozen = true;
          n++;
        }
      }
      return n;
    },
    async stop() {
      for (const c of conns) {
        c.client.destroy();
        c.upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
