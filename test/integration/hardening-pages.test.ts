import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../src/store/redis.js';
import type { Store } from '../../src/store/types.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { testStore } from '../helpers/stores.js';

/**
 * Hardening, point 9: the error boundary's 500 and 503 pages carry the same Content-Security-Policy and
 * headers as every page of the service (src/http/page.ts).
 */
let t: TestService;
let failure: (() => Error) | undefined;

/** The test run's store, whose every operation fails with `failure()` while it is set. */
function failable(store: Store): Store {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      if (prop === 'close') return value.bind(target);
      return (...args: unknown[]) => {
        if (failure) return Promise.reject(failure());
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

beforeAll(async () => {
  t = await startTestService({}, { store: failable(await testStore()) });
});
afterAll(async () => {
  failure = undefined;
  await t?.stop();
});

/** A browser's request that needs the store: authorise with a request_uri (its first use is claimed in the store). */
const pageRequest = () =>
  fetch(
    `${t.url}/v2.0/oidc/authorize?${new URLSearchParams({ client_id: 'issuer-pkce', request_uri: 'urn:ietf:params:oauth:request_uri:abc' })}`,
    {
      headers: { accept: 'text/html' },
      redirect: 'manual',
    },
  );

function expectPageHeaders(res: Response, html: string, what: string): void {
  expect(res.headers.get('content-type'), what).toMatch(/^text\/html/);
  const csp = res.headers.get('content-security-policy');
  expect(csp, what).toMatch(
    /^default-src 'none'; script-src 'nonce-[A-Za-z0-9+/=]+'; style-src 'nonce-[A-Za-z0-9+/=]+';/,
  );
  expect(csp, what).toContain("frame-ancestors 'none'");
  expect(csp, what).toContain("base-uri 'none'");
  // the page's inline style carries the nonce its CSP names
  const nonce = /style-src 'nonce-([^']+)'/.exec(csp!)![1];
  expect(html, what).toContain(`nonce="${nonce}"`);
  expect(res.headers.get('cache-control'), what).toBe('no-store');
  expect(res.headers.get('x-content-type-options'), what).toBe('nosniff');
  expect(res.headers.get('x-frame-options'), what).toBe('DENY');
  expect(res.headers.get('referrer-policy'), what).toBe('no-referrer');
}

describe("the error boundary's pages", () => {
  it('503 while the store is down: the page carries the CSP and the headers of every page', async () => {
    failure = () => new StoreUnavailableError(new Error('connect ECONNREFUSED'));
    try {
      const res = await pageRequest();
      const html = await res.text();
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('2');
      expect(html).toContain('Temporarily unavailable');
      expectPageHeaders(res, html, '503 page');
    } finally {
      failure = undefined;
    }
  });

  it('500 on an unexpected error: the page carries the CSP and the headers of every page', async () => {
    failure = () => new Error('something unexpected');
    try {
      const res = await pageRequest();
      const html = await res.text();
      expect(res.status).toBe(500);
      expect(html).toContain('Something went wrong');
      expect(html).not.toContain('something unexpected');
      expectPageHeaders(res, html, '500 page');
    } finally {
      failure = undefined;
    }
  });

  it("the same CSP as the prompt's own message pages", async () => {
    const prompt = await fetch(`${t.url}/interaction/v2/unknown-interaction`, { headers: { accept: 'text/html' } });
    const promptCsp = prompt.headers.get('content-security-policy');
    expect(promptCsp).toBeTruthy();
    failure = () => new Error('something unexpected');
    let boundaryCsp: string | null;
    try {
      boundaryCsp = (await pageRequest()).headers.get('content-security-policy');
    } finally {
      failure = undefined;
    }
    const shape = (csp: string | null) => csp?.replace(/'nonce-[^']+'/g, "'nonce-*'");
    expect(shape(boundaryCsp!)).toBe(shape(promptCsp));
  });
});
