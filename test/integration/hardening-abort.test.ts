import net from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { startTestService, testConfig, type TestService } from '../helpers/service.js';

/**
 * Hardening, point 8: a client that goes away before its body ended is an aborted request (an info-level
 * line, no stack), never a 500; /demo/start answers a body that is not its form with a 4xx.
 */
let t: TestService;
const lines: string[] = [];

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  t = await startTestService(
    (baseUrl) => ({
      demo: true,
      clients: (testConfig(0).clients as { clientId: string; redirectUris: string[] }[]).map((c) =>
        c.clientId === 'issuer-pkce' ? { ...c, redirectUris: [...c.redirectUris, `${baseUrl}/demo/callback`] } : c,
      ),
    }),
    { logger: createLogger('info', sink) },
  );
});
afterAll(async () => t?.stop());

interface LogLine {
  level: number;
  msg: string;
  path?: string;
  status?: number;
  aborted?: boolean;
  err?: { stack?: string };
}
const logged = () => lines.map((l) => JSON.parse(l) as LogLine);

/** Sends `head` and `body` on a raw socket, then leaves (`destroy`: a reset; `end`: a half-close); returns whatever came back. */
function sendAndLeave(head: string, body: string, how: 'destroy' | 'end'): Promise<string> {
  const { port } = new URL(t.url);
  return new Promise((resolve) => {
    let answer = '';
    const socket = net.connect(Number(port), '127.0.0.1', () => {
      socket.write(head + body, () => setTimeout(() => (how === 'destroy' ? socket.destroy() : socket.end()), 50));
    });
    socket.on('data', (d) => (answer += d.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(answer));
  });
}

async function lineFor(path: string, since: number): Promise<LogLine> {
  let found: LogLine | undefined;
  await expect
    .poll(
      () =>
        (found = logged()
          .slice(since)
          .find((l) => l.path === path && (l.msg === 'request' || l.msg === 'request aborted'))),
      { timeout: 3_000 },
    )
    .toBeDefined();
  return found!;
}

const FORM_POSTS = [
  '/v2.0/oidc/par',
  '/oidc/par',
  '/v2.0/oidc/token',
  '/oidc/token',
  '/wallet/token',
  '/vp/response',
  '/demo/start',
];

describe('a client that aborts while sending its body', () => {
  for (const path of FORM_POSTS) {
    for (const how of ['destroy', 'end'] as const) {
      it(`${path}: Content-Length 100, 3 bytes, then ${how === 'destroy' ? 'a disconnect' : 'a half-close'} -> an info line "request aborted", no stack, never a 500`, async () => {
        const since = lines.length;
        const head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\n`;
        const answer = await sendAndLeave(head, 'a=b', how);
        if (answer) expect(answer).not.toMatch(/^HTTP\/1\.1 5/);
        const line = await lineFor(path, since);
        expect(line).toMatchObject({ level: 30, msg: 'request aborted', aborted: true });
        expect(line.status).not.toBe(500);
        const mine = logged().slice(since);
        expect(mine.filter((l) => l.level >= 50)).toEqual([]); // nothing at error level
        expect(JSON.stringify(mine)).not.toMatch(/stack|unexpected error/);
        // and the service goes on answering
        expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
      });
    }
  }
});

describe('/demo/start with a body that is not its form', () => {
  it('a JSON body -> 400, with the error on a page', async () => {
    const since = lines.length;
    const res = await fetch(`${t.url}/demo/start`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/html' },
      body: JSON.stringify({ type: 'EmployeeBadge' }),
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await res.text()).toContain('invalid_request');
    expect(
      logged()
        .slice(since)
        .filter((l) => l.level >= 50),
    ).toEqual([]);
  });

  it('a JSON body asking for JSON -> 400 (never a 500)', async () => {
    const res = await fetch(`${t.url}/demo/start`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(400);
  });

  it('a form over 64 KB -> 400, declared or chunked', async () => {
    const big = `type=EmployeeBadge&attr.FirstName=${'x'.repeat(70 * 1024)}`;
    const declared = await fetch(`${t.url}/demo/start`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: big,
    });
    expect(declared.status).toBe(400);
    expect(await declared.text()).toContain('exceeds');
    const chunked = await fetch(`${t.url}/demo/start`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new ReadableStream({
        start(c) {
          for (let i = 0; i < 10; i++) c.enqueue(new TextEncoder().encode(big.slice(i * 7300, (i + 1) * 7300)));
          c.enqueue(new TextEncoder().encode(big.slice(73_000)));
          c.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(400);
  });

  it('a repeated field -> 400', async () => {
    const res = await fetch(`${t.url}/demo/start`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'type=EmployeeBadge&type=MembershipCard',
    });
    expect(res.status).toBe(400);
  });
});
