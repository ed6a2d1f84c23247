import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/**
 * The service behind TLS, as operators run it: a reverse proxy that terminates TLS at
 * `https://127.0.0.1:<port>` and forwards to the service's own http listener (which takes its scheme and
 * host from `baseUrl`, docs/operations.md). Its certificate is issued by the run's test CA
 * (test/tlsTrust.ts), which the test processes trust and each relying-party library is told to trust the
 * way it documents. The target can change (`forwardTo`), so one front serves the services a test restarts.
 */
export interface TlsFront {
  /** the https origin the service's `baseUrl` is set to */
  url: string;
  /** the test CA (PEM) */
  caFile: string;
  /** what passed, oldest first: method, path without query, and the Authorization scheme (never its credentials) */
  requests: { method: string; path: string; scheme?: string }[];
  forwardTo(listener: string): void;
  stop(): Promise<void>;
}

export async function startTlsFront(): Promise<TlsFront> {
  const dir = process.env.TEST_TLS_DIR;
  if (!dir) throw new Error('TEST_TLS_DIR is not set: the global setup test/tlsTrust.ts makes the test CA');
  let target: URL | undefined;
  const requests: TlsFront['requests'] = [];
  const tls = { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
  const server: Server = createServer(tls, (req, res) => {
    if (!target) return void res.writeHead(502).end();
    const scheme = req.headers.authorization?.split(' ')[0];
    requests.push({ method: req.method ?? '', path: (req.url ?? '').split('?')[0], ...(scheme ? { scheme } : {}) });
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    caFile: join(dir, 'ca.pem'),
    requests,
    forwardTo: (listener) => void (target = new URL(listener)),
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
