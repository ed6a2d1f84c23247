import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Service } from './app.js';

export interface RunningServer {
  server: Server;
  url: string;
  /**
   * Stops accepting connections, closes idle keep-alive connections, lets requests in flight finish
   * (up to graceMs; their answers close their connections), then closes the store. Idempotent.
   */
  stop(graceMs?: number): Promise<void>;
}

/**
 * How long a client may take: to send its headers (`headersTimeout`), and its whole request
 * (`requestTimeout`); a connection that has not made it by then gets a 408 and is closed. Node checks
 * these only every `connectionsCheckingInterval`, so the interval is what keeps them to within about a
 * second (with Node's default of 30 s, 15 s and 30 s became up to 29 s and 59 s).
 */
export interface ServerTimeouts {
  headersTimeout: number;
  requestTimeout: number;
  connectionsCheckingInterval: number;
}

export const SERVER_TIMEOUTS: ServerTimeouts = {
  headersTimeout: 15_000,
  requestTimeout: 30_000,
  connectionsCheckingInterval: 1_000,
};

export async function listen(
  service: Service,
  port = service.config.port,
  host = service.config.host,
  timeouts: Partial<ServerTimeouts> = {},
): Promise<RunningServer> {
  const { headersTimeout, requestTimeout, connectionsCheckingInterval } = { ...SERVER_TIMEOUTS, ...timeouts };
  const handle = service.app.callback();
  // Responses not yet sent, so that stop() can mark them `Connection: close`.
  const inFlight = new Set<ServerResponse>();
  let stopping: Promise<void> | undefined;
  const server = createServer(
    { maxHeaderSize: 32 * 1024, requestTimeout, headersTimeout, connectionsCheckingInterval },
    (req, res) => {
      // while stopping, a request that still arrives on an open keep-alive connection is answered, and
      // its connection closed after the answer
      if (stopping) res.setHeader('Connection', 'close');
      inFlight.add(res);
      res.once('close', () => inFlight.delete(res));
      void handle(req, res);
    },
  );
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  // GET /metrics on a listener of its own (metrics.host:metrics.port), never on the public port;
  // stopped with the service (service.close)
  try {
    await service.metrics.listen();
  } catch (err) {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    throw err;
  }
  const { port: actual } = server.address() as AddressInfo;
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return {
    server,
    url: `http://${shownHost}:${actual}`,
    stop(graceMs = 10_000) {
      stopping ??= (async () => {
        // Answers still to be sent say `Connection: close`: the client does not reuse the connection
        // and Node closes it after the answer, instead of keeping it open for keepAliveTimeout.
        for (const res of inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        // server.close() closes the connections idle now; connections whose answer had already
        // started become idle later: close them as they do, until all are gone or the grace is over
        server.closeIdleConnections();
        const sweep = setInterval(() => server.closeIdleConnections(), 100);
        const timer = setTimeout(() => server.closeAllConnections(), graceMs);
        try {
          await closed;
        } finally {
          clearInterval(sweep);
          clearTimeout(timer);
        }
        await service.close();
      })();
      return stopping;
    },
  };
}
