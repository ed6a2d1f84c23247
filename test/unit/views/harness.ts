/**
 * Test harness for the holder pages: a node:http server that serves rendered views with the production
 * Content-Security-Policy, a scriptable status endpoint, and helpers that watch a Playwright page for
 * CSP violations.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';

export function cspHeader(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    'img-src data:',
    "connect-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

export function newNonce(): string {
  return randomBytes(16).toString('base64');
}

/** A status answer, or `drop` to destroy the connection (a network error for fetch). */
export type StatusStep = { status: string; message?: string; attemptsLeft?: number; next?: string } | 'drop';

export interface PageRoute {
  /** Renders the page for a fresh nonce. */
  render: (nonce: string) => string;
  status?: number;
}

export interface Harness {
  origin: string;
  /** Registers a page at `path`. */
  page(path: string, route: PageRoute): void;
  /** Scripts the answers of `/status/<id>`: each poll takes the next step; the last one repeats. */
  status(id: string, steps: StatusStep[]): void;
  /** Times (ms since epoch) of the polls of `/status/<id>`. */
  polls(id: string): number[];
  close(): Promise<void>;
}

const CONTINUED = (nonce: string, id: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>continued</title><style nonce="${nonce}">body{font-family:sans-serif}</style></head><body><p id="continued">continued ${id}</p></body></html>`;

export async function startHarness(): Promise<Harness> {
  const pages = new Map<string, PageRoute>();
  const statuses = new Map<string, StatusStep[]>();
  const pollLog = new Map<string, number[]>();

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    // No keep-alive: a dropped status request then fails at once instead of being retried
    // transparently by the browser on a fresh connection (which it does for reused sockets).
    res.shouldKeepAlive = false;
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const status = /^\/status\/([^/]+)$/.exec(url.pathname);
    if (status) {
      const id = status[1];
      const log = pollLog.get(id) ?? [];
      log.push(Date.now());
      pollLog.set(id, log);
      const steps = statuses.get(id) ?? [{ status: 'pending' }];
      const step = steps.length > 1 ? steps.shift()! : steps[0];
      if (step === 'drop') {
        req.socket.destroy();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify(step));
      return;
    }
    const cont = /^\/continue\/([^/]+)$/.exec(url.pathname);
    if (cont) {
      const nonce = newNonce();
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': cspHeader(nonce) });
      res.end(CONTINUED(nonce, cont[1]));
      return;
    }
    const route = pages.get(url.pathname);
    if (route) {
      const nonce = newNonce();
      res.writeHead(route.status ?? 200, {
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy': cspHeader(nonce),
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
      });
      res.end(route.render(nonce));
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found');
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    origin: `http://127.0.0.1:${port}`,
    page(path, route) {
      pages.set(path, route);
    },
    status(id, steps) {
      statuses.set(id, [...steps]);
    },
    polls(id) {
      return [...(pollLog.get(id) ?? [])];
    },
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface PageWatch {
  /** Console errors and securitypolicyviolation events about CSP. */
  cspViolations(): Promise<string[]>;
  /** Uncaught page errors. */
  pageErrors: string[];
  /** Requests that left the test origin (other than data:). */
  foreignRequests: string[];
}

/** Watches `page` for CSP violations, script errors and requests to other origins. */
export async function watchPage(page: Page, origin: string): Promise<PageWatch> {
  const consoleCsp: string[] = [];
  const pageErrors: string[] = [];
  const foreignRequests: string[] = [];
  page.on('console', (msg) => {
    const text = msg.text();
    if (/content security policy|refused to/i.test(text)) consoleCsp.push(text);
  });
  page.on('pageerror', (err) => pageErrors.push(String(err)));
  page.on('request', (r) => {
    const u = r.url();
    if (!u.startsWith(origin) && !u.startsWith('data:')) foreignRequests.push(u);
  });
  await page.addInitScript(() => {
    const w = window as unknown as { __csp: string[] };
    w.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      w.__csp.push(`${e.violatedDirective} blocked ${e.blockedURI || '(inline)'}`);
    });
  });
  return {
    pageErrors,
    foreignRequests,
    async cspViolations() {
      let events: string[] = [];
      try {
        events = await page.evaluate(() => (window as unknown as { __csp?: string[] }).__csp ?? []);
      } catch {
        // page navigated away or closed: only the console log is left
      }
      return [...consoleCsp, ...events];
    },
  };
}

/** Records every text the status line (#status-text) shows, across navigations. */
export async function recordStatusLine(page: Page): Promise<string[]> {
  const log: string[] = [];
  await page.exposeBinding('__reportStatusLine', (_source, text: string) => {
    if (log[log.length - 1] !== text) log.push(text);
  });
  await page.addInitScript(() => {
    document.addEventListener('DOMContentLoaded', () => {
      const el = document.getElementById('status-text');
      if (!el) return;
      const w = window as unknown as { __reportStatusLine: (t: string) => void };
      const report = () => w.__reportStatusLine(el.textContent ?? '');
      report();
      new MutationObserver(report).observe(el, { childList: true, characterData: true, subtree: true });
    });
  });
  return log;
}
