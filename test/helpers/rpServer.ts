import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A relying party's redirect endpoint on loopback, recording where browsers arrive. */
export async function startRedirectTarget(): Promise<{ redirectUri: string; arrivals: URL[]; stop(): Promise<void> }> {
  const arrivals: URL[] = [];
  const server = createServer((req, res) => {
    arrivals.push(new URL(req.url ?? '/', 'http://127.0.0.1'));
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end('<!doctype html><title>Relying party</title><p>Back at the relying party.</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    redirectUri: `http://127.0.0.1:${port}/cb`,
    arrivals,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
