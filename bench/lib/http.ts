/**
 * The load generator's HTTP client: node:http over a keep-alive Agent whose socket count is the phase's
 * concurrency, so connections are reused and never more than `concurrency` are open. Only 127.0.0.1.
 */
import http, { type IncomingHttpHeaders } from 'node:http';

export interface HttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

export class HttpClient {
  readonly agent: http.Agent;
  readonly host: string;
  readonly port: number;
  readonly origin: string;
  /** requests sent so far (the soak counts to 100,000 with it) */
  sent = 0;

  constructor(origin: string, maxSockets: number) {
    const u = new URL(origin);
    if (u.hostname !== '127.0.0.1' && u.hostname !== 'localhost')
      throw new Error(`bench traffic goes to 127.0.0.1 only, not ${u.hostname}`);
    this.host = u.hostname;
    this.port = Number(u.port);
    this.origin = u.origin;
    this.agent = new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
  }

  /** `target` is a path (`/x?y`) or an absolute URL on this origin. */
  request(
    method: string,
    target: string,
    opts: { headers?: Record<string, string>; body?: string; timeoutMs?: number } = {},
  ): Promise<HttpResponse> {
    let path = target;
    if (!target.startsWith('/')) {
      const u = new URL(target);
      if (u.origin !== this.origin)
        return Promise.reject(new Error(`refusing a request to ${u.origin} (bench origin is ${this.origin})`));
      path = `${u.pathname}${u.search}`;
    }
    this.sent++;
    const headers: Record<string, string | number> = { ...opts.headers };
    if (opts.body !== undefined) headers['content-length'] = Buffer.byteLength(opts.body);
    return new Promise((resolve, reject) => {
      const req = http.request(
        { host: this.host, port: this.port, method, path, headers, agent: this.agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks).toString('utf8'),
            }),
          );
          res.on('error', reject);
        },
      );
      req.setTimeout(opts.timeoutMs ?? 30_000, () => req.destroy(new Error(`timeout: ${method} ${path}`)));
      req.on('error', reject);
      req.end(opts.body);
    });
  }

  get(target: string, headers?: Record<string, string>): Promise<HttpResponse> {
    return this.request('GET', target, { headers });
  }

  postForm(
    target: string,
    params: Record<string, string>,
    headers: Record<string, string> = {},
  ): Promise<HttpResponse> {
    return this.request('POST', target, {
      body: new URLSearchParams(params).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** A browser's cookies for one flow (fresh per flow: every iteration is a new holder's browser). */
export class CookieJar {
  readonly #cookies = new Map<string, string>();

  take(res: HttpResponse): void {
    const lines = res.headers['set-cookie'];
    if (!lines) return;
    for (const line of lines) {
      const semi = line.indexOf(';');
      const pair = semi === -1 ? line : line.slice(0, semi);
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1);
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
  }

  header(): string {
    let out = '';
    for (const [k, v] of this.#cookies) out += `${out ? '; ' : ''}${k}=${v}`;
    return out;
  }
}

/** GET with the jar's cookies, remembering the answer's; text/html like a browser. */
export async function browserGet(client: HttpClient, jar: CookieJar, url: string): Promise<HttpResponse> {
  const res = await client.get(url, { cookie: jar.header(), accept: 'text/html' });
  jar.take(res);
  return res;
}

export function location(res: HttpResponse, base: string): string {
  const loc = res.headers.location;
  if (!loc || res.status < 300 || res.status >= 400)
    throw new Error(`expected a redirect, got ${res.status}: ${res.body.slice(0, 200)}`);
  return new URL(loc, base).href;
}

export function json(res: HttpResponse, expected: number, what: string): Record<string, any> {
  if (res.status !== expected)
    throw new Error(`${what}: expected ${expected}, got ${res.status}: ${res.body.slice(0, 300)}`);
  return JSON.parse(res.body) as Record<string, any>;
}
