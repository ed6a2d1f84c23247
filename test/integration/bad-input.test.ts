/**
 * Malformed and hostile requests at the PAR, token and authorise endpoints of both versions: content
 * types (spec Endpoints: "All request bodies are application/x-www-form-urlencoded"), body and hint size
 * limits, repeated parameters (RFC 6749 §3.1), methods, percent-encoding, a large state, unknown paths.
 * Every answer is a JSON error a developer can act on (D4), with no-store; never a 500, and the server
 * keeps answering afterwards.
 */
import net from 'node:net';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, SECRETS, REDIRECT, type TestService } from '../helpers/service.js';
import { Browser, makeHint, offerFromPage, postForm } from '../helpers/rp.js';
import { expectError } from '../helpers/assertions.js';
import { versionsAt, type VersionAt } from '../helpers/versions.js';

let svc: TestService;
let url: string;

beforeAll(async () => {
  svc = await startTestService();
  url = svc.url;
});
afterAll(async () => {
  await svc?.stop();
});

const FORM = 'application/x-www-form-urlencoded';
const MiB = 1024 * 1024;

type VersionCase = VersionAt;
const { V2, VERSIONS } = versionsAt(() => url);

const membership = () => ({ MemberName: 'Ada Lovelace', MemberNumber: 1815 });

async function parParams(
  vc: VersionCase,
  overrides: Record<string, string | undefined> = {},
  claims: Record<string, unknown> = membership(),
): Promise<URLSearchParams> {
  const all: Record<string, string | undefined> = {
    client_id: 'issuer-plain',
    client_secret: SECRETS.plainIssuer,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: vc.issue('MembershipCard'),
    nonce: randomBytes(8).toString('hex'),
    state: `st-${randomBytes(6).toString('hex')}`,
    id_token_hint: await makeHint({
      clientId: 'issuer-plain',
      secret: SECRETS.plainIssuer,
      audience: vc.issuer(),
      claims,
    }),
    ...overrides,
  };
  const out = new URLSearchParams();
  for (const [k, v] of Object.entries(all)) if (v !== undefined) out.set(k, v);
  return out;
}

function tokenParams(): URLSearchParams {
  return new URLSearchParams({
    grant_type: 'authorization_code',
    client_id: 'issuer-plain',
    client_secret: SECRETS.plainIssuer,
    code: randomBytes(16).toString('base64url'),
    redirect_uri: REDIRECT,
  });
}

interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

async function send(path: string, init: RequestInit & { duplex?: 'half' } = {}): Promise<Answer> {
  const res = await fetch(`${url}${path}`, { redirect: 'manual', ...init } as RequestInit);
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  expect(res.status, `never a 500: ${text.slice(0, 300)}`).toBeLessThan(500);
  return { status: res.status, body, headers: res.headers };
}

/** The service still answers normally (discovery, and a PAR that succeeds). */
async function expectStillServing(vc: VersionCase = V2): Promise<void> {
  const disc = await send(vc.discovery);
  expect(disc.status).toBe(200);
  const par = await postForm(`${url}${vc.par}`, await parParams(vc));
  expect(par.status, JSON.stringify(par.body)).toBe(201);
}

/**
 * Raw HTTP/1.1 on one keep-alive socket: writes `requests` (strings or buffers, in order, each written
 * when the previous is out) and returns every status line the server sent before closing or going idle.
 */
async function rawExchange(
  parts: (string | Buffer)[],
  idleMs = 1500,
): Promise<{ statuses: number[]; raw: string; reset: boolean }> {
  const u = new URL(url);
  const sock = net.connect(Number(u.port), u.hostname);
  let raw = '';
  let reset = false;
  sock.on('data', (d) => {
    raw += d.toString('latin1');
  });
  sock.on('error', () => {
    reset = true;
  });
  await new Promise<void>((resolve, reject) => {
    sock.once('connect', () => resolve());
    sock.once('error', reject);
  });
  for (const part of parts) {
    if (sock.destroyed) break;
    await new Promise<void>((resolve) => sock.write(part, () => resolve()));
  }
  await new Promise<void>((resolve) => {
    let timer = setTimeout(done, idleMs);
    function done() {
      sock.destroy();
      resolve();
    }
    sock.on('data', () => {
      clearTimeout(timer);
      timer = setTimeout(done, idleMs);
    });
    sock.on('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  const statuses = [...raw.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
  return { statuses, raw, reset };
}

/**
 * GET with node:http and a 256 KiB header limit, following redirects with cookies until `stopAt`
 * (fetch's 16 KiB response-header limit cannot read a Location that carries a 20 KB state; browsers can).
 */
async function followLarge(start: string, stopAt: string): Promise<{ final: string; status?: number }> {
  const cookies = new Map<string, string>();
  let current = start;
  for (let i = 0; i < 10; i++) {
    if (current.startsWith(stopAt)) return { final: current };
    const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = http.get(
        current,
        {
          maxHeaderSize: 256 * 1024,
          headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; '), accept: 'text/html' },
        },
        resolve,
      );
      req.on('error', reject);
    });
    res.resume();
    for (const line of res.headers['set-cookie'] ?? []) {
      const [pair] = line.split(';');
      const j = pair.indexOf('=');
      cookies.set(pair.slice(0, j).trim(), pair.slice(j + 1));
    }
    const status = res.statusCode ?? 0;
    expect(status, `never a 500 at ${current}`).toBeLessThan(500);
    if (status >= 300 && status < 400 && res.headers.location) {
      current = new URL(res.headers.location, current).href;
      continue;
    }
    return { final: current, status };
  }
  throw new Error('too many redirects');
}

// ------------------------------------------------------------------------------------------------

describe.each(VERSIONS)('Content type ($v)', (vc) => {
  const tag = `(${vc.v})`;
  const bodies: [string, () => Promise<{ body: BodyInit; headers: Record<string, string> }>][] = [
    [
      'application/json',
      async () => ({
        body: JSON.stringify(Object.fromEntries(await parParams(vc))),
        headers: { 'content-type': 'application/json' },
      }),
    ],
    ['text/plain', async () => ({ body: (await parParams(vc)).toString(), headers: { 'content-type': 'text/plain' } })],
    [
      'multipart/form-data',
      async () => {
        const fd = new FormData();
        for (const [k, v] of await parParams(vc)) fd.set(k, v);
        return { body: fd, headers: {} };
      },
    ],
    ['no content type', async () => ({ body: new Blob([(await parParams(vc)).toString()]), headers: {} })],
  ];

  it.each(bodies)(`Endpoints / PAR: a %s body -> 400 invalid_request ${tag}`, async (_name, make) => {
    const { body, headers } = await make();
    const res = await send(vc.par, { method: 'POST', body, headers });
    expectError(res, 'invalid_request', FORM);
  });

  it.each(bodies)(`Endpoints / token: a %s body -> 400 invalid_request ${tag}`, async (_name, make) => {
    const { body, headers } = await make();
    const res = await send(vc.token, { method: 'POST', body, headers });
    expectError(res, 'invalid_request', FORM);
  });

  it(`Endpoints / PAR: ${FORM}; charset=UTF-8 (as standard clients send it) -> 201 ${tag}`, async () => {
    const res = await send(vc.par, {
      method: 'POST',
      body: (await parParams(vc)).toString(),
      headers: { 'content-type': `${FORM}; charset=UTF-8` },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  });

  it(`Endpoints / PAR: the media type is case-insensitive (RFC 9110 8.3.1) -> 201 ${tag}`, async () => {
    const res = await send(vc.par, {
      method: 'POST',
      body: (await parParams(vc)).toString(),
      headers: { 'content-type': 'Application/X-WWW-Form-URLEncoded' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  });

  it(`Endpoints / PAR: an empty form body -> 400, a JSON error ${tag}`, async () => {
    const res = await send(vc.par, { method: 'POST', body: '', headers: { 'content-type': FORM } });
    expectError(res, 'unauthorised_client', 'client_id');
  });
});

describe.each(VERSIONS)('Body size limits ($v)', (vc) => {
  const tag = `(${vc.v})`;

  it(`Limits: a 2 MiB PAR body (hint limit 1 MiB) -> 400 invalid_request; the server still answers ${tag}`, async () => {
    const params = await parParams(vc);
    params.set('padding', 'a'.repeat(2 * MiB));
    const res = await send(vc.par, { method: 'POST', body: params.toString(), headers: { 'content-type': FORM } });
    expectError(res, 'invalid_request', /exceeds|too large|bytes/);
    await expectStillServing(vc);
  });

  it(`Limits: a 2 MiB token body -> 400 invalid_request; the server still answers ${tag}`, async () => {
    const params = tokenParams();
    params.set('padding', 'a'.repeat(2 * MiB));
    const res = await send(vc.token, { method: 'POST', body: params.toString(), headers: { 'content-type': FORM } });
    expectError(res, 'invalid_request', /exceeds|too large|bytes/);
    await expectStillServing(vc);
  });

  it(`Limits: a 2 MiB PAR body sent chunked (no Content-Length) -> 400 invalid_request (JSON, no-store) ${tag}`, async () => {
    // raw socket, so that the client's connection pool is not involved (see "connection reuse" below)
    const parts: (string | Buffer)[] = [
      `POST ${vc.par} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${FORM}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`,
    ];
    for (let i = 0; i < 32; i++) parts.push(Buffer.from(`${(64 * 1024).toString(16)}\r\n${'a'.repeat(64 * 1024)}\r\n`));
    parts.push('0\r\n\r\n');
    const { statuses, raw } = await rawExchange(parts);
    expect(statuses).toEqual([400]);
    expect(raw).toMatch(/^content-type: application\/json/im);
    expect(raw).toMatch(/^cache-control: no-store/im);
    const body = JSON.parse(
      raw
        .slice(raw.indexOf('\r\n\r\n') + 4)
        .replace(/^[0-9a-f]+\r\n/i, '')
        .split('\r\n')[0],
    );
    expect(body.error).toBe('invalid_request');
    expect(body.error_description).toMatch(/exceeds|too large|bytes/);
    await expectStillServing(vc);
  });

  it(`Limits: an id_token_hint of 2 MiB -> 400 invalid_request ${tag}`, async () => {
    const big = await makeHint({
      clientId: 'issuer-plain',
      secret: SECRETS.plainIssuer,
      audience: vc.issuer(),
      claims: { ...membership(), Pad: 'a'.repeat(1.5 * MiB) },
    });
    expect(big.length).toBeGreaterThan(2 * MiB - 1);
    const res = await send(vc.par, {
      method: 'POST',
      body: (await parParams(vc, { id_token_hint: big })).toString(),
      headers: { 'content-type': FORM },
    });
    expectError(res, 'invalid_request', /id_token_hint|exceeds|bytes/);
    await expectStillServing(vc);
  });

  it(`Limits: an id_token_hint just over 1 MiB (body within limit) -> 400 invalid_request naming id_token_hint ${tag}`, async () => {
    const big = await makeHint({
      clientId: 'issuer-plain',
      secret: SECRETS.plainIssuer,
      audience: vc.issuer(),
      claims: { ...membership(), Pad: 'a'.repeat(Math.ceil(0.75 * MiB) + 1024) },
    });
    expect(big.length).toBeGreaterThan(MiB);
    expect(big.length).toBeLessThan(MiB + 32 * 1024);
    const res = await send(vc.par, {
      method: 'POST',
      body: (await parParams(vc, { id_token_hint: big })).toString(),
      headers: { 'content-type': FORM },
    });
    expectError(res, 'invalid_request', 'id_token_hint');
  });
});

describe('Body size limits / connection reuse (keep-alive)', () => {
  const head = (path: string, extra: string) =>
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${FORM}\r\n${extra}\r\n`;
  const chunk = Buffer.from(`${(64 * 1024).toString(16)}\r\n${'a'.repeat(64 * 1024)}\r\n`);
  const healthz = 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';

  it.each(VERSIONS)(
    'Limits: after an oversized PAR body with Content-Length, the same keep-alive connection answers the next request ($v)',
    async (vc) => {
      const size = 2 * MiB;
      const parts: (string | Buffer)[] = [head(vc.par, `Content-Length: ${size}\r\n`)];
      for (let sent = 0; sent < size; sent += 64 * 1024)
        parts.push(Buffer.alloc(Math.min(64 * 1024, size - sent), 'a'));
      parts.push(healthz);
      const { statuses } = await rawExchange(parts);
      expect(statuses).toEqual([400, 200]);
    },
  );

  it.each(VERSIONS)(
    'Limits: after an oversized chunked PAR body, the connection answers the next request or is closed with Connection: close ($v)',
    async (vc) => {
      const parts: (string | Buffer)[] = [head(vc.par, 'Transfer-Encoding: chunked\r\n')];
      for (let i = 0; i < 32; i++) parts.push(chunk);
      parts.push('0\r\n\r\n');
      parts.push(healthz);
      const { statuses, raw } = await rawExchange(parts);
      expect(statuses[0]).toBe(400);
      const first = raw.slice(0, raw.indexOf('\r\n\r\n'));
      // Either the server reads past the rest and answers the next request on the same connection, or it
      // says it will close the connection; answering `keep-alive` and then resetting loses the next request.
      if (/^connection:\s*close/im.test(first)) expect(statuses).toEqual([400]);
      else expect(statuses).toEqual([400, 200]);
    },
  );
});

describe.each(VERSIONS)('Repeated parameters (RFC 6749 3.1) ($v)', (vc) => {
  const tag = `(${vc.v})`;

  it(`RFC 6749 3.1: PAR with scope twice -> 400 invalid_request naming scope ${tag}`, async () => {
    const params = await parParams(vc);
    params.append('scope', vc.issue('MembershipCard'));
    const res = await send(vc.par, { method: 'POST', body: params.toString(), headers: { 'content-type': FORM } });
    expectError(res, 'invalid_request', 'scope');
  });

  it(`RFC 6749 3.1: PAR with client_id twice (different values) -> 400 invalid_request naming client_id ${tag}`, async () => {
    const params = await parParams(vc);
    params.append('client_id', 'other');
    const res = await send(vc.par, { method: 'POST', body: params.toString(), headers: { 'content-type': FORM } });
    expectError(res, 'invalid_request', 'client_id');
  });

  it(`RFC 6749 3.1: PAR with id_token_hint twice -> 400 invalid_request naming id_token_hint ${tag}`, async () => {
    const params = await parParams(vc);
    params.append(
      'id_token_hint',
      await makeHint({
        clientId: 'issuer-plain',
        secret: SECRETS.plainIssuer,
        audience: vc.issuer(),
        claims: membership(),
      }),
    );
    const res = await send(vc.par, { method: 'POST', body: params.toString(), headers: { 'content-type': FORM } });
    expectError(res, 'invalid_request', 'id_token_hint');
  });

  it(`RFC 6749 3.1: token with code twice -> 400 invalid_request naming code ${tag}`, async () => {
    const params = tokenParams();
    params.append('code', 'another');
    const res = await send(vc.token, { method: 'POST', body: params.toString(), headers: { 'content-type': FORM } });
    expectError(res, 'invalid_request', 'code');
  });

  it(`RFC 6749 3.1: authorise with request_uri twice -> 400 invalid_request naming request_uri ${tag}`, async () => {
    const u = new URL(`${url}${vc.authorize}`);
    u.searchParams.append('client_id', 'issuer-plain');
    u.searchParams.append('request_uri', 'urn:ietf:params:oauth:request_uri:a');
    u.searchParams.append('request_uri', 'urn:ietf:params:oauth:request_uri:b');
    const res = await send(`${u.pathname}${u.search}`);
    expectError(res, 'invalid_request', 'request_uri');
  });

  it(`RFC 6749 3.1: a repeated parameter with an empty value counts as omitted -> 201 ${tag}`, async () => {
    const params = await parParams(vc);
    params.append('scope', '');
    const res = await send(vc.par, { method: 'POST', body: params.toString(), headers: { 'content-type': FORM } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  });
});

describe('Repeated parameters on the Version 2 non-PAR authorise query', () => {
  it('RFC 6749 3.1: authorise (v2 non-PAR) with scope twice -> 400 invalid_request, no redirect', async () => {
    const u = new URL(`${url}${V2.authorize}`);
    for (const [k, v] of Object.entries({
      client_id: 'issuer-plain',
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid issue.MembershipCard',
      nonce: 'n',
      state: 's',
    }))
      u.searchParams.append(k, v);
    u.searchParams.append('scope', 'openid MembershipCard');
    const res = await send(`${u.pathname}${u.search}`);
    expectError(res, 'invalid_request', 'scope');
    expect(res.headers.get('location')).toBeNull();
  });

  it('RFC 6749 3.1: authorise (v2 non-PAR) with redirect_uri twice -> 400 invalid_request, no redirect', async () => {
    const u = new URL(`${url}${V2.authorize}`);
    for (const [k, v] of Object.entries({
      client_id: 'issuer-plain',
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid issue.MembershipCard',
      nonce: 'n',
    }))
      u.searchParams.append(k, v);
    u.searchParams.append('redirect_uri', 'https://evil.example/cb');
    const res = await send(`${u.pathname}${u.search}`);
    expectError(res, 'invalid_request', 'redirect_uri');
    expect(res.headers.get('location')).toBeNull();
  });
});

describe.each(VERSIONS)('Methods ($v)', (vc) => {
  const tag = `(${vc.v})`;

  it(`Endpoints / PAR: GET -> 405 with Allow: POST and a JSON error ${tag}`, async () => {
    const res = await send(vc.par);
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(res.body.error).toBe('invalid_request');
    expect(res.headers.get('cache-control')).toContain('no-store');
  });

  it.each(['PUT', 'DELETE', 'PATCH'])(`Endpoints / PAR: %s -> 405 ${tag}`, async (method) => {
    const res = await send(vc.par, {
      method,
      body: (await parParams(vc)).toString(),
      headers: { 'content-type': FORM },
    });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });

  it(`Endpoints / token: GET -> 405 with Allow: POST ${tag}`, async () => {
    const res = await send(`${vc.token}?${tokenParams().toString()}`);
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });

  it(`Endpoints / authorise: POST -> 405 with Allow: GET ${tag}`, async () => {
    const res = await send(vc.authorize, {
      method: 'POST',
      body: 'client_id=issuer-plain',
      headers: { 'content-type': FORM },
    });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET');
  });

  it(`Endpoints / discovery: POST -> 405 with Allow: GET ${tag}`, async () => {
    const res = await send(vc.discovery, { method: 'POST', body: '', headers: { 'content-type': FORM } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET');
  });
});

describe.each(VERSIONS)('Percent-encoding ($v)', (vc) => {
  const tag = `(${vc.v})`;

  it(`PAR: invalid percent-encoding in client_id (%ZZ) -> 400 (unknown client), a JSON error ${tag}`, async () => {
    const body = (await parParams(vc)).toString().replace(/client_id=[^&]*/, 'client_id=%ZZ');
    const res = await send(vc.par, { method: 'POST', body, headers: { 'content-type': FORM } });
    expectError(res, 'unauthorised_client', 'client_id');
  });

  it(`PAR: a truncated percent-escape in scope (%E0%A4%A) -> 400 invalid_scope ${tag}`, async () => {
    const body = (await parParams(vc)).toString().replace(/scope=[^&]*/, 'scope=%E0%A4%A');
    const res = await send(vc.par, { method: 'POST', body, headers: { 'content-type': FORM } });
    expectError(res, 'invalid_scope', 'scope');
  });

  it(`PAR: invalid UTF-8 in the hint (%C3%28) -> 400 invalid_request naming id_token_hint ${tag}`, async () => {
    const body = (await parParams(vc)).toString().replace(/id_token_hint=[^&]*/, 'id_token_hint=%C3%28.%FF.%FE');
    const res = await send(vc.par, { method: 'POST', body, headers: { 'content-type': FORM } });
    expectError(res, 'invalid_request', 'id_token_hint');
  });

  it(`PAR: a lone % at the end of the body -> 400, a JSON error ${tag}`, async () => {
    const body = `${(await parParams(vc)).toString()}&nonce2=%`;
    const res = await send(vc.par, { method: 'POST', body, headers: { 'content-type': FORM } });
    expect(res.status).toBeLessThan(500);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it(`token: invalid percent-encoding in code (%ZZ) -> 400 invalid_grant, a JSON error ${tag}`, async () => {
    const body = tokenParams()
      .toString()
      .replace(/code=[^&]*/, 'code=%ZZ%E0%A4%A');
    const res = await send(vc.token, { method: 'POST', body, headers: { 'content-type': FORM } });
    expectError(res, 'invalid_grant', 'code');
  });

  it(`authorise: invalid percent-encoding in client_id and request_uri -> 400 invalid_request ${tag}`, async () => {
    const res = await send(`${vc.authorize}?client_id=%E0%A4%A&request_uri=%ZZ`);
    expectError(res, 'invalid_request', /client_id|request_uri/);
  });

  it(`Unknown path with invalid percent-encoding -> 404 JSON ${tag}`, async () => {
    const res = await send(`${vc.authorize.replace('/authorize', '')}/%E0%A4%A`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });
});

describe('Percent-encoding / interaction and resume paths', () => {
  it('Interaction path with invalid percent-encoding -> 4xx, never a 500', async () => {
    for (const path of [
      '/interaction/v2/%E0%A4%A',
      '/interaction/v1/%ZZ',
      '/interaction/v2/abc/status',
      '/interaction/v2/abc/continue',
    ]) {
      const res = await send(path);
      expect(res.status, path).toBeGreaterThanOrEqual(400);
    }
  });

  it('Resume path (/v2.0/oidc/authorize/<uid>) with an unknown or malformed uid -> 400 invalid_request', async () => {
    for (const path of ['/v2.0/oidc/authorize/abc', '/v2.0/oidc/authorize/%E0%A4%A', '/oidc/authorize/abc']) {
      const res = await send(path);
      expectError(res, 'invalid_request', /.+/);
    }
  });

  it('Authorise (v2 non-PAR): invalid percent-encoding in state is carried back on the redirect, never a 500', async () => {
    const q = `client_id=issuer-plain&redirect_uri=${encodeURIComponent(REDIRECT)}&scope=%ZZ&state=%E0%A4%A`;
    const res = await send(`${V2.authorize}?${q}`);
    expect(res.status).toBe(302);
    const loc = new URL(res.headers.get('location')!);
    expect(`${loc.origin}${loc.pathname}`).toBe(REDIRECT);
    expect(loc.searchParams.get('error')).toBe('invalid_request');
    expect(loc.searchParams.has('state')).toBe(true);
  });
});

describe.each(VERSIONS)('A 20 KB state ($v)', (vc) => {
  const tag = `(${vc.v})`;

  it(`Endpoints / PAR: a 20 KB state -> 201, and the authorise redirect returns it unchanged ${tag}`, async () => {
    const state = randomBytes(15 * 1024)
      .toString('base64url')
      .slice(0, 20 * 1024);
    expect(state.length).toBe(20 * 1024);
    // a hint that fails the template at the authorise step, to get a redirect to the client carrying state
    const params = await parParams(vc, { state }, { MemberName: 'Ada' });
    const res = await send(vc.par, { method: 'POST', body: params.toString(), headers: { 'content-type': FORM } });
    if (res.status === 400) {
      // a service may refuse so large a state; then it names it
      expectError(res, 'invalid_request', 'state');
      return;
    }
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const u = new URL(`${url}${vc.authorize}`);
    u.searchParams.set('client_id', 'issuer-plain');
    u.searchParams.set('request_uri', res.body.request_uri);
    const out = await followLarge(u.href, REDIRECT);
    expect(out.final.startsWith(REDIRECT), `stopped at ${out.final} (${out.status})`).toBe(true);
    const back = new URL(out.final).searchParams;
    expect(back.get('error')).toBe('invalid_scope');
    expect(back.get('state')).toBe(state);
  });
});

describe('A 20 KB state on the Version 2 non-PAR query', () => {
  it('Endpoints / authorise (v2 non-PAR): a 20 KB state -> answered (redirect, 4xx or 431), never a 500 or a dropped connection', async () => {
    const u = new URL(`${url}${V2.authorize}`);
    for (const [k, v] of Object.entries({
      client_id: 'issuer-plain',
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid issue.MembershipCard',
      nonce: 'n',
      state: 's'.repeat(20 * 1024),
      id_token_hint: await makeHint({
        clientId: 'issuer-plain',
        secret: SECRETS.plainIssuer,
        audience: url,
        claims: membership(),
      }),
    }))
      u.searchParams.set(k, v);
    const res = await send(`${u.pathname}${u.search}`);
    expect([200, 302, 303, 400, 414, 431]).toContain(res.status);
    await expectStillServing();
  });
});

describe('Internal parameters and hostile names', () => {
  it.each(VERSIONS)(
    'D7: an internal parameter (vc_hint) sent by the client is ignored: its claims never reach the prompt ($v)',
    async (vc) => {
      // vc_hint is the edge's own carrier of the verified hint; a client's copy (unsigned, claims that
      // fail the template) must be dropped, and the signed id_token_hint used
      const forged = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ Evil: 1 })).toString('base64url')}.`;
      const params = await parParams(vc, { vc_hint: forged });
      const res = await send(vc.par, { method: 'POST', body: params.toString(), headers: { 'content-type': FORM } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const u = new URL(`${url}${vc.authorize}`);
      u.searchParams.set('client_id', 'issuer-plain');
      u.searchParams.set('request_uri', res.body.request_uri);
      const out = await new Browser(REDIRECT).follow(u.href);
      expect(out.final.startsWith(REDIRECT), `redirected to the client: ${out.final}`).toBe(false);
      expect(out.res!.status).toBe(200);
      expect(offerFromPage(out.html!)).toMatch(/^openid-credential-offer:\/\//);
    },
  );

  it.each(VERSIONS)('PAR with __proto__ / constructor parameters -> a normal answer, never a 500 ($v)', async (vc) => {
    const body = `${(await parParams(vc)).toString()}&__proto__=x&constructor=y&__proto__%5Bpolluted%5D=1`;
    const res = await send(vc.par, { method: 'POST', body, headers: { 'content-type': FORM } });
    expect([201, 400]).toContain(res.status);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    await expectStillServing(vc);
  });
});

describe.each(VERSIONS)('Parameters the service does not support ($v)', (vc) => {
  const tag = `(${vc.v})`;

  it(`RFC 9126 2.1: PAR carrying a request_uri -> 400 invalid_request naming request_uri ${tag}`, async () => {
    const params = await parParams(vc, { request_uri: 'urn:ietf:params:oauth:request_uri:abc' });
    const res = await send(vc.par, { method: 'POST', body: params.toString(), headers: { 'content-type': FORM } });
    expectError(res, 'invalid_request', 'request_uri');
  });

  it(`OpenID configuration document / request_parameter_supported false: PAR carrying a request object -> 400 with a description naming request (D4) ${tag}`, async () => {
    const params = await parParams(vc, { request: 'eyJhbGciOiJub25lIn0.e30.' });
    const res = await send(vc.par, { method: 'POST', body: params.toString(), headers: { 'content-type': FORM } });
    expect(res.status).toBe(400);
    expect(['invalid_request', 'request_not_supported']).toContain(res.body.error);
    expect(res.body.error_description).toMatch(/\brequest\b/);
    expect(res.headers.get('cache-control')).toContain('no-store');
  });

  it(`D4: PAR carrying a registration parameter -> 400 with a description naming registration ${tag}`, async () => {
    const params = await parParams(vc, { registration: '{}' });
    const res = await send(vc.par, { method: 'POST', body: params.toString(), headers: { 'content-type': FORM } });
    expect(res.status).toBe(400);
    expect(['invalid_request', 'registration_not_supported']).toContain(res.body.error);
    expect(res.body.error_description).toContain('registration');
  });
});

describe('Unknown paths', () => {
  it.each([
    '/nope',
    '/v2.0/oidc/nope',
    '/oidc/nope',
    '/v2.0/.well-known/nope',
    '/oidc/par/extra',
    '/v3.0/oidc/par',
    '/wallet/nope',
  ])('Unknown path %s -> 404 JSON', async (path) => {
    const res = await send(path);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(typeof res.body.error).toBe('string');
  });

  it('Unknown path, POST with a form -> 404 JSON', async () => {
    const res = await send('/v2.0/oidc/nope', { method: 'POST', body: 'a=b', headers: { 'content-type': FORM } });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });
});

/** Last in the file: a failure here leaves a reset connection in the pool, which must not disturb other tests. */
describe('Body size limits / a pooled client after an oversized chunked body', () => {
  it('Limits: after an oversized chunked PAR body, a client with a connection pool gets answers to its next requests (v2)', async () => {
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < 32; i++) c.enqueue(new TextEncoder().encode('a'.repeat(64 * 1024)));
        c.close();
      },
    });
    const res = await send(V2.par, { method: 'POST', body: stream, headers: { 'content-type': FORM }, duplex: 'half' });
    expect(res.status).toBe(400);
    const errors: string[] = [];
    for (let i = 0; i < 5; i++) {
      try {
        const r = await fetch(`${url}${V2.par}`, {
          method: 'POST',
          headers: { 'content-type': FORM },
          body: 'client_id=nobody',
        });
        expect(r.status).toBe(400);
        await r.text();
      } catch (e) {
        errors.push(String((e as { cause?: { code?: string } }).cause?.code ?? e));
      }
    }
    expect(errors, 'requests lost after the oversized body').toEqual([]);
  });
});
