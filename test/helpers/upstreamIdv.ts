/**
 * The built-in test identity provider (src/demo/idvProvider.ts, a real oidc-provider instance) on a Koa
 * http server of its own on 127.0.0.1, for VerifiedIdentity_Other tests (D12). Besides the provider it
 * offers:
 * - stop() / restart(): the provider down (connections refused) and back, on the same port and issuer;
 * - switches that tamper with what passes: `corruptSignature` breaks the signature of the ID token in
 *   token responses, `replaceNonce` swaps the nonce of authorization requests before the provider sees
 *   them, `holdTokenMs` delays token responses (a provider that does not answer in time), `padTokenBytes`
 *   makes them larger;
 * - Chromium helpers for its login page: confirmUpstreamLogin(page, person?), declineUpstreamLogin(page).
 *
 *   const idv = await startUpstreamIdv({ clients: [{ clientId: 'rp', clientSecret: 's', clientAuth: 'client_secret_basic', redirectUris: [cb] }] });
 *   ... new UpstreamIdv({ ..., issuer: idv.issuer, clientId: 'rp', clientSecret: 's' }, { redirectUri: cb })
 *   await idv.close();
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import Koa from 'koa';
import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { Page } from 'playwright-core';
import { createDemoIdvProvider, type DemoIdvClient } from '../../src/demo/idvProvider.js';

export interface UpstreamIdvTamper {
  /** the id_token of token responses carries a signature that does not verify */
  corruptSignature: boolean;
  /** authorization requests reach the provider with another nonce than the client sent */
  replaceNonce: boolean;
  /** token responses are held this long before the provider answers (0: not held) */
  holdTokenMs: number;
  /** token responses carry this many more bytes (a member `padding`), as a hostile provider's could */
  padTokenBytes: number;
}

export interface TestUpstreamIdv {
  /** http://127.0.0.1:<port>/idv */
  issuer: string;
  provider: Provider;
  tamper: UpstreamIdvTamper;
  /** the ID token of the last token response, as the provider made it (before any tampering) */
  readonly lastIdToken: string | undefined;
  /**
   * How the client authenticated at the last token request: oidc-provider accepts either secret method
   * from a client registered for one, so the tests look at the request itself.
   */
  readonly lastTokenAuth: 'client_secret_basic' | 'client_secret_post' | undefined;
  /** every switch off */
  reset(): void;
  /** the provider down: the server closes and refuses connections */
  stop(): Promise<void>;
  /** the provider back, at the same issuer */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export async function startUpstreamIdv(opts: {
  clients: DemoIdvClient[];
  verifiedClaims?: boolean;
  path?: string;
}): Promise<TestUpstreamIdv> {
  const path = opts.path ?? '/idv';
  let server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const issuer = `http://127.0.0.1:${port}${path}`;
  const { provider, middleware } = await createDemoIdvProvider({
    issuer,
    clients: opts.clients,
    verifiedClaims: opts.verifiedClaims ?? true,
  });

  const tamper: UpstreamIdvTamper = { corruptSignature: false, replaceNonce: false, holdTokenMs: 0, padTokenBytes: 0 };
  let lastIdToken: string | undefined;
  let lastTokenAuth: TestUpstreamIdv['lastTokenAuth'];
  const timers = new Set<NodeJS.Timeout>();
  const hold = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  // oidc-provider's documented pre- and post-middleware: the token endpoint's answer after it is made
  provider.use(async (ctx, next) => {
    if (ctx.path === '/token') {
      lastTokenAuth = /^basic /i.test(ctx.get('authorization')) ? 'client_secret_basic' : 'client_secret_post';
      if (tamper.holdTokenMs > 0) await hold(tamper.holdTokenMs);
    }
    await next();
    const body = ctx.body as { id_token?: unknown } | undefined;
    if ((ctx as KoaContextWithOIDC).oidc?.route !== 'token' || typeof body?.id_token !== 'string') return;
    lastIdToken = body.id_token;
    if (tamper.corruptSignature) ctx.body = { ...body, id_token: corruptSignature(body.id_token) };
    if (tamper.padTokenBytes > 0) ctx.body = { ...(ctx.body as object), padding: 'x'.repeat(tamper.padTokenBytes) };
  });

  const app = new Koa();
  // before the provider sees the authorization request, as an attacker in the middle would
  app.use(async (ctx, next) => {
    if (tamper.replaceNonce && ctx.path === `${path}/auth` && ctx.query.nonce) {
      const query = new URLSearchParams(ctx.querystring);
      query.set('nonce', randomBytes(16).toString('base64url'));
      ctx.querystring = query.toString();
    }
    await next();
  });
  app.use(middleware);
  app.use((ctx) => {
    ctx.status = 404;
  });
  const handler = app.callback();
  server.on('request', handler);

  const closeServer = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });

  return {
    issuer,
    provider,
    tamper,
    get lastIdToken() {
      return lastIdToken;
    },
    get lastTokenAuth() {
      return lastTokenAuth;
    },
    reset() {
      Object.assign(tamper, { corruptSignature: false, replaceNonce: false, holdTokenMs: 0, padTokenBytes: 0 });
    },
    async stop() {
      if (server.listening) await closeServer();
    },
    async restart() {
      if (server.listening) return;
      server = createServer(handler);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => resolve());
      });
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      if (server.listening) await closeServer();
    },
  };
}

/** The same JWT with one character of its signature changed (inside it, so that it is not a padding bit). */
function corruptSignature(jwt: string): string {
  const [header, payload, signature] = jwt.split('.');
  const i = Math.floor(signature.length / 2);
  const swapped = signature[i] === 'A' ? 'B' : 'A';
  return `${header}.${payload}.${signature.slice(0, i)}${swapped}${signature.slice(i + 1)}`;
}

export interface UpstreamPerson {
  givenName?: string;
  familyName?: string;
  /** YYYY-MM-DD */
  birthDate?: string;
}

/** The provider's part of the page's URL: everything before its /interaction/<uid>. */
function providerPrefix(page: Page): string {
  const url = page.url();
  const at = url.indexOf('/interaction/');
  if (at < 0) throw new Error(`not on the test identity provider's login page: ${url}`);
  return url.slice(0, at);
}

/**
 * On the provider's login page (after page.goto(start.url)): enters the person (the form's prefilled
 * Ada Lovelace, 1815-12-10, for what is not given), confirms, and waits until the browser has left the
 * provider. Returns the URL it arrived at (the redirect URI with code, state and iss).
 */
export async function confirmUpstreamLogin(page: Page, person: UpstreamPerson = {}): Promise<URL> {
  await page.getByRole('heading', { name: 'Example ID check (demo)' }).waitFor();
  const prefix = providerPrefix(page);
  if (person.givenName !== undefined) await page.getByLabel('Given name').fill(person.givenName);
  if (person.familyName !== undefined) await page.getByLabel('Family name').fill(person.familyName);
  if (person.birthDate !== undefined) await page.getByLabel('Birth date').fill(person.birthDate);
  await Promise.all([
    page.waitForURL((u) => !u.href.startsWith(prefix)),
    page.getByRole('button', { name: 'Confirm identity' }).click(),
  ]);
  return new URL(page.url());
}

/** On the provider's login page: declines, and waits until the browser has left the provider. Returns where it arrived. */
export async function declineUpstreamLogin(page: Page): Promise<URL> {
  await page.getByRole('heading', { name: 'Example ID check (demo)' }).waitFor();
  const prefix = providerPrefix(page);
  await Promise.all([
    page.waitForURL((u) => !u.href.startsWith(prefix)),
    page.getByRole('button', { name: 'Decline' }).click(),
  ]);
  return new URL(page.url());
}
