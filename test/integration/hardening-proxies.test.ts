import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trustedForwarding } from '../../src/app.js';
import { createLogger } from '../../src/log.js';
import { startTestService, SECRETS, REDIRECT, type TestService } from '../helpers/service.js';
import { pushIssuance } from '../helpers/flows.js';
import { offerFromPage } from '../helpers/rp.js';

/**
 * Hardening, point 7: every URL the service publishes comes from `baseUrl`, never from request headers;
 * forwarded headers count only from `trustedProxies`, and only for the client address.
 */

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A GET by node:http, which (unlike fetch) sends whatever Host header it is given. */
function get(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Every http(s) URL in a JSON document. */
function urlsIn(value: unknown, found: string[] = []): string[] {
  if (typeof value === 'string' && /^https?:\/\//i.test(value)) found.push(value);
  else if (Array.isArray(value)) value.forEach((v) => urlsIn(v, found));
  else if (value && typeof value === 'object') Object.values(value).forEach((v) => urlsIn(v, found));
  return found;
}

/** What an attacker sends to make the service name another host or scheme. */
const FORGED: Record<string, Record<string, string>> = {
  'X-Forwarded-Host': { 'x-forwarded-host': 'evil.example' },
  'X-Forwarded-Proto': { 'x-forwarded-proto': 'https' },
  'X-Forwarded-Host and -Proto': {
    'x-forwarded-host': 'evil.example:8443',
    'x-forwarded-proto': 'https',
    'x-forwarded-port': '8443',
  },
  Forwarded: { forwarded: 'for=203.0.113.9;host=evil.example;proto=https' },
  'a forged Host': { host: 'evil.example' },
};

const METADATA = [
  '/.well-known/openid-credential-issuer/wallet',
  '/.well-known/oauth-authorization-server/wallet',
  '/wallet/.well-known/openid-credential-issuer',
  '/wallet/.well-known/oauth-authorization-server',
  '/v2.0/.well-known/openid-configuration',
  '/oidc/.well-known/openid-configuration',
  '/.well-known/openid-configuration',
  '/.well-known/jwt-vc-issuer/wallet',
];

function expectOnlyBaseUrl(base: string, what: string, text: string): void {
  expect(text, what).not.toContain('evil.example');
  const urls = urlsIn(JSON.parse(text));
  expect(urls.length, what).toBeGreaterThan(0);
  for (const url of urls) expect(url === base || url.startsWith(`${base}/`), `${what}: ${url}`).toBe(true);
}

function logSink(lines: string[]): Writable {
  return new Writable({
    write(chunk, _enc, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
}

const requestLines = (lines: string[], path: string) =>
  lines
    .map((l) => JSON.parse(l) as { msg: string; path?: string; ip?: string })
    .filter((l) => l.msg === 'request' && l.path === path);

describe('without trusted proxies (the default)', () => {
  let t: TestService;
  const lines: string[] = [];
  beforeAll(async () => {
    t = await startTestService({}, { logger: createLogger('info', logSink(lines)) });
  });
  afterAll(async () => t?.stop());

  it('has no trusted proxy unless configured', () => {
    expect(t.service.config.trustedProxies).toEqual([]);
  });

  for (const [attack, headers] of Object.entries(FORGED)) {
    it(`names only baseUrl in the metadata and discovery documents, with ${attack}`, async () => {
      for (const path of METADATA) {
        const res = await get(`${t.url}${path}`, headers);
        expect(res.status, path).toBe(200);
        expectOnlyBaseUrl(t.url, path, res.body);
      }
    });
  }

  it('names only baseUrl in the credential offer on the prompt, and in the offer behind it', async () => {
    const attack = {
      'x-forwarded-host': 'evil.example',
      'x-forwarded-proto': 'https',
      forwarded: 'host=evil.example;proto=https',
    };
    const rp = await pushIssuance(t.url, {
      clientId: 'issuer-pkce',
      secret: SECRETS.pkceIssuer,
      attributes: { FirstName: 'Ada', LastName: 'Lovelace' },
      pin: '1234',
      redirectUri: REDIRECT,
    });
    // the browser's way to the prompt, every request forged (node:http: the Host header too)
    const cookies = new Map<string, string>();
    let url = rp.authorizeUrl.href;
    let res: Answer | undefined;
    for (let i = 0; i < 10; i++) {
      res = await get(url, {
        ...attack,
        host: 'evil.example',
        accept: 'text/html',
        cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; '),
      });
      for (const line of res.headers['set-cookie'] ?? []) {
        const [pair] = line.split(';');
        cookies.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
      }
      if (res.status < 300 || res.status >= 400) break;
      const location = new URL(res.headers.location!, url);
      expect(location.origin, 'a redirect on the way to the prompt').toBe(t.url);
      url = location.href;
    }
    expect(res!.status).toBe(200);
    expect(res!.body).not.toContain('evil.example');
    const link = offerFromPage(res!.body);
    const offerUri = new URL(link).searchParams.get('credential_offer_uri')!;
    expect(offerUri.startsWith(`${t.url}/wallet/`)).toBe(true);
    const offer = await get(offerUri, { ...attack, host: 'evil.example' });
    expect(offer.status).toBe(200);
    expectOnlyBaseUrl(t.url, 'credential offer', offer.body);
  });

  it("logs the connection's address, never what X-Forwarded-For claims", async () => {
    await get(`${t.url}/healthz`, { 'x-forwarded-for': '203.0.113.7' });
    await get(`${t.url}/healthz`, { forwarded: 'for=203.0.113.8' });
    const logged = requestLines(lines, '/healthz');
    expect(logged.length).toBeGreaterThanOrEqual(2);
    for (const line of logged) expect(line.ip).toBe('127.0.0.1');
  });
});

describe('behind a trusted proxy (trustedProxies: 127.0.0.1/32)', () => {
  let t: TestService;
  const lines: string[] = [];
  beforeAll(async () => {
    t = await startTestService({ trustedProxies: ['127.0.0.1/32'] }, { logger: createLogger('info', logSink(lines)) });
  });
  afterAll(async () => t?.stop());

  it('takes the client address in the request log from X-Forwarded-For', async () => {
    await get(`${t.url}/healthz`, { 'x-forwarded-for': '203.0.113.7' });
    expect(requestLines(lines, '/healthz').at(-1)?.ip).toBe('203.0.113.7');
    // the proxy appends the address it saw: what the client wrote to the left of it does not count
    await get(`${t.url}/healthz`, { 'x-forwarded-for': '198.51.100.66, 203.0.113.7' });
    expect(requestLines(lines, '/healthz').at(-1)?.ip).toBe('203.0.113.7');
    // a chain of trusted proxies: the first address that is not one of them
    await get(`${t.url}/healthz`, { 'x-forwarded-for': '198.51.100.66, 203.0.113.7, 127.0.0.1' });
    expect(requestLines(lines, '/healthz').at(-1)?.ip).toBe('203.0.113.7');
    await get(`${t.url}/healthz`);
    expect(requestLines(lines, '/healthz').at(-1)?.ip).toBe('127.0.0.1');
  });

  it('still names only baseUrl, whatever the proxy forwards', async () => {
    for (const headers of Object.values(FORGED)) {
      for (const path of METADATA) {
        const res = await get(`${t.url}${path}`, headers);
        expect(res.status, path).toBe(200);
        expectOnlyBaseUrl(t.url, path, res.body);
      }
    }
  });
});

describe('with an https baseUrl, reached over plain HTTP (a TLS-terminating proxy in front)', () => {
  let t: TestService;
  let direct = '';
  beforeAll(async () => {
    t = await startTestService((local) => {
      direct = local;
      return { baseUrl: 'https://vc.example' };
    });
  });
  afterAll(async () => t?.stop());

  it('names https://vc.example, whatever Host and X-Forwarded-Proto say', async () => {
    const attacks: Record<string, string>[] = [
      {},
      { 'x-forwarded-proto': 'http' },
      { host: 'evil.example' },
      { 'x-forwarded-host': 'evil.example' },
    ];
    for (const headers of attacks) {
      const res = await get(`${direct}/.well-known/openid-credential-issuer/wallet`, headers);
      expect(res.status).toBe(200);
      expectOnlyBaseUrl('https://vc.example', 'credential issuer metadata', res.body);
      expect(JSON.parse(res.body).credential_endpoint).toBe('https://vc.example/wallet/credential');
    }
  });
});

describe('trustedForwarding, IPv6 and IPv4-mapped addresses', () => {
  async function serve(trusted: string[]): Promise<{ port: number; close(): Promise<void> }> {
    const app = new Koa();
    app.proxy = true;
    app.use(trustedForwarding('https://vc.example', trusted));
    app.use((ctx) => {
      ctx.body = { ip: ctx.ip, host: ctx.host, protocol: ctx.protocol, forwardedFor: ctx.get('x-forwarded-for') };
    });
    const server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '::', resolve));
    return {
      port: (server.address() as AddressInfo).port,
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  }

  it('matches an IPv4 rule for an IPv4-mapped IPv6 connection and an IPv6 rule for ::1', async () => {
    const s = await serve(['127.0.0.0/8', '::1/128']);
    try {
      for (const host of ['127.0.0.1', '[::1]']) {
        const res = JSON.parse(
          (
            await get(`http://${host}:${s.port}/`, {
              'x-forwarded-for': '2001:db8::7',
              host: 'evil.example',
              'x-forwarded-proto': 'http',
            })
          ).body,
        );
        expect(res, host).toEqual({
          ip: '2001:db8::7',
          host: 'vc.example',
          protocol: 'https',
          forwardedFor: '2001:db8::7',
        });
      }
    } finally {
      await s.close();
    }
  });

  it('drops X-Forwarded-For from an address outside the rules', async () => {
    const s = await serve(['10.0.0.0/8', 'fd00::/8']);
    try {
      const res = JSON.parse((await get(`http://127.0.0.1:${s.port}/`, { 'x-forwarded-for': '203.0.113.7' })).body);
      expect(res).toEqual({ ip: '::ffff:127.0.0.1', host: 'vc.example', protocol: 'https', forwardedFor: '' });
    } finally {
      await s.close();
    }
  });
});
