import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Service } from './app.js';

export interface RunningServer {
  server: Server;
  url: string;
  /** Stops accepting, lets requests in flight finish (up to graceMs), then closes the store. */
  stop(graceMs?: number): Promise<void>;
}

export async function listen(service: Service, port = service.config.port, host = service.config.host): Promise<RunningServer> {
  const server = createServer({ maxHeaderSize: 32 * 1024, requestTimeout: 30_000, headersTimeout: 15_000 }, service.app.callback());
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const { port: actual } = server.address() as AddressInfo;
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return {
    server,
    url: `http://${shownHost}:${actual}`,
    async stop(graceMs = 10_000) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), graceMs);
      await closed;
      clearTimeout(timer);
      await service.close();
    },
  };
}
