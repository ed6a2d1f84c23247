import http, { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createService, type Service } from '../../src/app.js';
import { validateConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { createLogger } from '../../src/log.js';
import { createRedisStore } from '../../src/store/redis.js';
import { testConfig } from './service.js';

/**
 * A tiny reverse proxy on 127.0.0.1 standing in for a load balancer: each request goes to the next
 * instance in turn (strict round robin, so two consecutive requests never land on the same instance when
 * there are two or more). Method, path, headers (Host included: the instances see the proxy's host, the
 * service's baseUrl) and body go through unchanged, as do the status and the response headers (raw, so
 * several Set-Cookie lines stay several). Hop-by-hop headers are not forwarded. It records which instance
 * served which request.
 */

export interface ServedRequest {
  seq: number;
  /** index into the proxy's targets */
  instance: number;
  method: string;
  /** path and query as the client sent them */
  path: string;
  status: number;
}

export interface RoundRobinProxy {
  url: string;
  port: number;
  readonly targets: string[];
  setTargets(urls: string[]): void;
  readonly served: ServedRequest[];
  /** Forgets the record (not the rotation). */
  reset(): void;
  /** The instances that served requests whose path (without query) matches. */
  instancesFor(path: RegExp, method?: string): number[];
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
]);

function endToEnd(raw: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (!HOP_BY_HOP.has(raw[i].toLowerCase())) out.push(raw[i], raw[i + 1]);
  }
  return out;
}

export async function startRoundRobinProxy(targets: string[] = []): Promise<RoundRobinProxy> {
  let current = [...targets];
  let next = 0;
  let seq = 0;
  const served: ServedRequest[] = [];
  // no keep-alive towards the instances, so an instance can be stopped without the proxy holding sockets
  const agent = new http.Agent({ keepAlive: false });

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    if (!current.length) {
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"no_upstream"}');
      return;
    }
    const instance = next % current.length;
    next = (next + 1) % current.length;
    const entry: ServedRequest = { seq: ++seq, instance, method: req.method ?? 'GET', path: req.url ?? '/', status: 0 };
    served.push(entry);
    const target = new URL(current[instance]);
    const upstream = http.request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: endToEnd(req.rawHeaders),
        agent,
        timeout: 30_000,
      },
      (up) => {
        entry.status = up.statusCode ?? 0;
        res.writeHead(up.statusCode ?? 502, up.statusMessage, endToEnd(up.rawHeaders));
        up.pipe(res);
        up.on('error', () => res.destroy());
      },
    );
    upstream.on('timeout', () => upstream.destroy(new Error('upstream timeout')));
    upstream.on('error', (err) => {
      entry.status = 502;
      if (!res.headersSent)
        res
          .writeHead(502, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: 'bad_gateway', error_description: err.message }));
      else res.destroy();
    });
    req.pipe(upstream);
  };

  const server = createServer({ maxHeaderSize: 32 * 1024 }, handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    get targets() {
      return [...current];
    },
    setTargets(urls) {
      current = [...urls];
      next = 0;
    },
    served,
    reset() {
      served.length = 0;
    },
    instancesFor(path, method) {
      return served
        .filter((s) => path.test(s.path.split('?')[0]) && (!method || s.method === method))
        .map((s) => s.instance);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}

export interface Instance {
  url: string;
  service: Service;
  server: Server;
}

export interface InstancesBehindProxy {
  /** the proxy's URL: every instance's baseUrl */
  baseUrl: string;
  proxy: RoundRobinProxy;
  instances: Instance[];
  config: Config;
  stop(): Promise<void>;
}

/**
 * `count` service instances as an operator runs them behind a load balancer (D14): one config (test
 * clients and credential types, baseUrl = the proxy), one keys directory, one Redis with one key prefix,
 * but each instance its own Redis connection (createRedisStore), its own Service and its own HTTP server.
 * Instances are created one after the other so that only the first generates the key files.
 * Shared by the multi-instance issuance tests and, when it lands, the multi-instance verification case.
 */
export async function startInstancesBehindProxy(opts: {
  count?: number;
  store: { url: string; keyPrefix: string } | { cluster: { host: string; port: number }[]; keyPrefix: string };
  overrides?: Record<string, unknown>;
}): Promise<InstancesBehindProxy> {
  const count = opts.count ?? 3;
  const proxy = await startRoundRobinProxy();
  const config = validateConfig(testConfig(proxy.port, { store: opts.store, ...opts.overrides }));
  const instances: Instance[] = [];
  const stop = async () => {
    await proxy.close();
    for (const i of instances) {
      i.server.closeAllConnections();
      await new Promise<void>((resolve) => i.server.close(() => resolve()));
      await i.service.close();
    }
  };
  try {
    for (let n = 0; n < count; n++) {
      if (config.store === 'memory') throw new Error('instances behind a proxy need a shared Redis store');
      const store = await createRedisStore(config.store);
      const service = await createService(
        { config, file: 'test', baseDir: process.cwd() },
        { store, logger: createLogger('silent') },
      ).catch(async (err) => {
        await store.close();
        throw err;
      });
      const server = createServer({ maxHeaderSize: 32 * 1024 }, service.app.callback());
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      instances.push({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, service, server });
    }
  } catch (err) {
    await stop();
    throw err;
  }
  proxy.setTargets(instances.map((i) => i.url));
  return { baseUrl: proxy.url, proxy, instances, config, stop };
}
