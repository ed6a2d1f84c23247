import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Koa from 'koa';
import * as oidc from 'openid-client';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../helpers/browser.js';
import { ENDPOINT_SETS, discoverRp, type EndpointSet } from '../helpers/endpointSets.js';
import { startTestService, testConfig, SECRETS, type TestService } from '../helpers/service.js';
import { startRedirectTarget } from '../helpers/rpServer.js';
import { createDemoIdvProvider } from '../../src/demo/idvProvider.js';
import { createLogger } from '../../src/log.js';

/**
 * Issue 18, VerifiedIdentity_Other (D12), as a person and a relying party live it: the relying party is
 * openid-client unmodified; the other identity provider is a real oidc-provider instance on loopback with
 * its own login page, which Chromium fills in. Spec Scope format row: "Second identity-verification flow:
 * VerifiedIdentity_Other; must contain openid"; authorise row: "context_id: Onfido-style second-provider
 * flow for non-PAR".
 */
let t: TestService;
let browser: Browser;
let rp: Awaited<ReturnType<typeof startRedirectTarget>>;
let upstream: Server;
let issuer: string;
/** switches on the way to the upstream provider (a real one: its answers are altered after it made them) */
const upstreamTamper = { tokenDown: false, nonce: false, signature: false };

const IDV = { clientId: 'vc-provider-at-idv', clientSecret: 'idv-secret-0123456789' };
/** every line the service logs */
const logLines: string[] = [];

function reset(): void {
  Object.assign(upstreamTamper, { tokenDown: false, nonce: false, signature: false });
}

/** The provider itself: made once the service listens (it needs our callback URL). */
let provider: Koa.Middleware = async (_ctx, next) => next();

async function startUpstream(): Promise<void> {
  const app = new Koa();
  app.use(async (ctx, next) => {
    if (upstreamTamper.tokenDown && ctx.path.endsWith('/token')) {
      ctx.req.socket.destroy(); // as a provider that is down: no answer at all
      return;
    }
    if (upstreamTamper.nonce && ctx.method === 'GET' && ctx.path.endsWith('/auth') && ctx.query.nonce) {
      const query = new URLSearchParams(ctx.querystring);
      query.set('nonce', 'a-nonce-the-service-never-sent');
      ctx.querystring = query.toString();
    }
    await next();
  });
  app.use((ctx, next) => provider(ctx, next));
  upstream = createServer(app.callback());
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/idv`;
}

beforeAll(async () => {
  rp = await startRedirectTarget();
  await startUpstream();
  const base = testConfig(0) as { clients: Array<{ clientId: string; scopes: string[]; redirectUris: string[] }> };
  t = await startTestService(
    {
      clients: base.clients.map((c) => ({
        ...c,
        redirectUris: [...c.redirectUris, rp.redirectUri],
        scopes: c.clientId === 'issuer-plain' ? c.scopes : [...c.scopes, 'VerifiedIdentity_Other'],
      })),
      identity: {
        VerifiedIdentity_Other: {
          displayName: 'Example ID check',
          issuer,
          ...IDV,
          scopes: ['openid', 'profile'],
          claims: { given_name: 'given_name', family_name: 'family_name', birthdate: 'birthdate' },
        },
      },
    },
    {
      logger: createLogger('info', {
        write: (line: string) => logLines.push(line),
      } as unknown as NodeJS.WritableStream),
    },
  );
  const made = await createDemoIdvProvider({
    issuer,
    clients: [{ ...IDV, redirectUris: [`${t.url}/identity/callback`], clientAuth: 'client_secret_basic' }],
  });
  // oidc-provider's documented post-middleware: the token response's ID token, altered after the provider made it
  made.provider.use(async (ctx, next) => {
    await next();
    const body = ctx.body as { id_token?: string } | undefined;
    if (upstreamTamper.signature && ctx.path === '/token' && typeof body?.id_token === 'string') {
      const [h, p, sig] = body.id_token.split('.');
      ctx.body = { ...body, id_token: `${h}.${p}.${sig.startsWith('A') ? `B${sig.slice(1)}` : `A${sig.slice(1)}`}` };
    }
  });
  provider = made.middleware;
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.stop();
  await rp?.stop();
  upstream?.closeAllConnections();
  await new Promise<void>((resolve) => (upstream ? upstream.close(() => resolve()) : resolve()));
});

type Case = EndpointSet;
const cases = ENDPOINT_SETS;

interface Started {
  config: oidc.Configuration;
  url: string;
  state: string;
  nonce: string;
  verifier: string;
  c: Case;
}

async function startFlow(c: Case): Promise<Started> {
  const config = await discoverRp(t.url, c);
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const params: Record<string, string> = {
    redirect_uri: rp.redirectUri,
    scope: 'openid VerifiedIdentity_Other',
    state,
    nonce,
  };
  if (c.pkce)
    Object.assign(params, {
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
  const url = c.par
    ? await oidc.buildAuthorizationUrlWithPAR(config, params)
    : oidc.buildAuthorizationUrl(config, params);
  return { config, url: url.href, state, nonce, verifier, c };
}

async function redeem(s: Started, page: Page) {
  const tokens = await oidc.authorizationCodeGrant(s.config, new URL(page.url()), {
    pkceCodeVerifier: s.c.pkce ? s.verifier : undefined,
    expectedState: s.state,
    expectedNonce: s.nonce,
    idTokenExpected: true,
  });
  return tokens.claims()!;
}

/** On the prompt: to the provider, its login page, and back (Confirm identity or Decline). */
async function atProvider(page: Page, answer: 'Confirm identity' | 'Decline'): Promise<void> {
  await page.getByRole('link', { name: /Continue with Example ID check/ }).click();
  await page.getByRole('button', { name: answer }).click();
}

async function backAtClient(page: Page): Promise<URLSearchParams> {
  await page
    .waitForURL((u) => u.href.startsWith(rp.redirectUri), { timeout: 15_000 })
    .catch(async (err) => {
      throw new Error(
        `${(err as Error).message}; at ${page.url()}: ${(
          await page
            .locator('body')
            .innerText()
            .catch(() => '')
        ).slice(0, 300)}`,
      );
    });
  return new URL(page.url()).searchParams;
}

describe.each(cases)('VerifiedIdentity_Other end to end: $name', (c) => {
  it('goes to the provider and back, and the ID token carries the mapped claims, the nonce and a pairwise sub', async () => {
    const s = await startFlow(c);
    const page = await browser.newPage();
    await page.goto(s.url);
    const body = await page.locator('main').innerText();
    expect(body).toContain('Verify your identity');
    expect(body).toContain('Example ID check');
    // spec: context_id is the second provider's non-PAR parameter; a pushed journey has none
    expect(await page.locator('#resume-link').count()).toBe(c.par ? 0 : 1);
    await atProvider(page, 'Confirm identity');
    const back = await backAtClient(page);
    expect(back.get('state')).toBe(s.state);
    const claims = await redeem(s, page);
    expect(claims).toMatchObject({
      given_name: 'Ada',
      family_name: 'Lovelace',
      birthdate: '1815-12-10',
      iss: c.issuer(t.url),
      aud: c.clientId,
      nonce: s.nonce,
    });
    expect(claims.sub).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await page.close();
  });
});

describe("VerifiedIdentity_Other: the subject (OIDC Core §8.1 pairwise, from the provider's iss and sub)", () => {
  it('is the same for the same person at one client, and differs between clients', async () => {
    const subs: unknown[] = [];
    for (const c of [cases[0], cases[1], cases[2]]) {
      const s = await startFlow(c);
      const page = await browser.newPage();
      await page.goto(s.url);
      await atProvider(page, 'Confirm identity');
      await backAtClient(page);
      subs.push((await redeem(s, page)).sub);
      await page.close();
    }
    expect(subs[1]).toBe(subs[0]);
    expect(subs[2]).not.toBe(subs[0]);
  });
});

describe('VerifiedIdentity_Other: continuing on another device with context_id', () => {
  async function openPrompt(c: Case = cases[1]) {
    const s = await startFlow(c);
    const first = await browser.newContext();
    const page = await first.newPage();
    await page.goto(s.url);
    const link = (await page.locator('#resume-link').getAttribute('href'))!;
    return { s, first, page, link };
  }

  it('the link resumes the journey in another browser, which lands on the redirect_uri with a code and the original state; the first page says so', async () => {
    const { s, first, page, link } = await openPrompt();
    const url = new URL(link);
    expect(url.origin + url.pathname).toBe(`${t.url}/v2.0/oidc/authorize`);
    expect([...url.searchParams.keys()].sort()).toEqual(['client_id', 'context_id']);
    expect(url.searchParams.get('context_id')).toMatch(/^[A-Za-z0-9_-]{43}$/); // 256 random bits
    const second = await browser.newContext();
    const phone = await second.newPage();
    await phone.goto(link);
    await phone.getByRole('button', { name: 'Confirm identity' }).click();
    const back = await backAtClient(phone);
    expect(back.get('state')).toBe(s.state);
    expect(back.get('iss')).toBe(t.url);
    expect(await redeem(s, phone)).toMatchObject({ given_name: 'Ada', nonce: s.nonce });
    await expect
      .poll(() => page.locator('#status-text').innerText(), { timeout: 10_000 })
      .toContain('continued on another device');
    // the first browser can no longer end the journey
    await page.goto(`${page.url()}/continue`);
    expect(await page.locator('main').innerText()).toContain('continued on another device');
    await Promise.all([first.close(), second.close()]);
  });

  it('Version 1 without PAR continues at /oidc/authorizev1', async () => {
    const { first, link } = await openPrompt(cases[3]);
    expect(new URL(link).pathname).toBe('/oidc/authorizev1');
    await first.close();
  });

  it('replayed: 400 invalid_request', async () => {
    const { first, link } = await openPrompt();
    expect((await fetch(link, { redirect: 'manual' })).status).toBe(303);
    const again = await fetch(link, { redirect: 'manual' });
    expect(again.status).toBe(400);
    expect(await again.json()).toMatchObject({
      error: 'invalid_request',
      error_description: expect.stringContaining('context_id'),
    });
    await first.close();
  });

  it('two browsers racing one context_id: one wins', async () => {
    const { first, link } = await openPrompt();
    const answers = await Promise.all([1, 2, 3, 4].map(() => fetch(link, { redirect: 'manual' })));
    expect(answers.map((a) => a.status).sort()).toEqual([303, 400, 400, 400]);
    expect(
      answers
        .find((a) => a.status === 303)!
        .headers.get('location')!
        .startsWith(issuer),
    ).toBe(true);
    await first.close();
  });

  it('named by another client: 400 invalid_request, and it stays usable by its own client', async () => {
    const { first, link } = await openPrompt();
    const foreign = new URL(link);
    foreign.searchParams.set('client_id', 'other');
    expect((await fetch(foreign, { redirect: 'manual' })).status).toBe(400);
    expect((await fetch(link, { redirect: 'manual' })).status).toBe(303);
    await first.close();
  });

  it('a parameter that differs from the original request: 400 invalid_request', async () => {
    const { first, link } = await openPrompt();
    const changed = new URL(link);
    changed.searchParams.set('redirect_uri', 'https://attacker.example/cb');
    const res = await fetch(changed, { redirect: 'manual' });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'invalid_request' });
    await first.close();
  });

  it('unknown or malformed: 400 invalid_request', async () => {
    for (const contextId of ['x'.repeat(43), 'short', '']) {
      const res = await fetch(`${t.url}/v2.0/oidc/authorize?client_id=issuer-pkce&context_id=${contextId}`, {
        redirect: 'manual',
      });
      expect(res.status).toBe(400);
    }
  });
});

describe('VerifiedIdentity_Other: failures end with access_denied and a description (never a crash)', () => {
  async function failing(
    setup: () => void,
    act: (page: Page) => Promise<void>,
    c: Case = cases[1],
  ): Promise<URLSearchParams> {
    reset();
    const s = await startFlow(c);
    const page = await browser.newPage();
    await page.goto(s.url);
    setup();
    try {
      await act(page);
      const back = await backAtClient(page);
      expect(back.get('state')).toBe(s.state);
      expect(back.get('code')).toBeNull();
      expect(back.get('error')).toBe('access_denied');
      return back;
    } finally {
      reset();
      await page.close();
    }
  }

  it('the person declines at the provider (its access_denied)', async () => {
    const back = await failing(
      () => undefined,
      (page) => atProvider(page, 'Decline'),
    );
    expect(back.get('error_description')).toMatch(/access_denied/);
  });

  it('the provider cannot be reached when the journey starts (its discovery fails)', async () => {
    // a service of its own: the other service has discovered its provider already
    const unreachable = await startTestService({
      clients: (testConfig(0).clients as Array<{ clientId: string; scopes: string[]; redirectUris: string[] }>).map(
        (c) => ({
          ...c,
          redirectUris: [...c.redirectUris, rp.redirectUri],
          scopes: [...c.scopes, 'VerifiedIdentity_Other'],
        }),
      ),
      identity: {
        VerifiedIdentity_Other: {
          displayName: 'Example ID check',
          issuer: 'http://127.0.0.1:1/idv',
          ...IDV,
          claims: { given_name: 'given_name' },
        },
      },
    });
    const page = await browser.newPage();
    try {
      const config = await oidc.discovery(
        new URL(`${unreachable.url}/v2.0/.well-known/openid-configuration`),
        'issuer-plain',
        SECRETS.plainIssuer,
        oidc.ClientSecretPost(SECRETS.plainIssuer),
        { execute: [oidc.allowInsecureRequests] },
      );
      await page.goto(
        oidc.buildAuthorizationUrl(config, {
          redirect_uri: rp.redirectUri,
          scope: 'openid VerifiedIdentity_Other',
          state: 'down-state',
          nonce: 'n',
        }).href,
      );
      await page.getByRole('link', { name: /Continue with Example ID check/ }).click();
      const back = await backAtClient(page);
      expect(back.get('state')).toBe('down-state');
      expect(back.get('error')).toBe('access_denied');
      expect(back.get('error_description')).toMatch(/unavailable/);
    } finally {
      await page.close();
      await unreachable.stop();
    }
  });

  it("the provider's token endpoint is down when the browser comes back", async () => {
    const back = await failing(
      () => (upstreamTamper.tokenDown = true),
      (page) => atProvider(page, 'Confirm identity'),
    );
    expect(back.get('error_description')).toMatch(/unavailable|reach/i);
  });

  it("the ID token's nonce is not the one sent", async () => {
    const back = await failing(
      () => (upstreamTamper.nonce = true),
      (page) => atProvider(page, 'Confirm identity'),
      cases[2],
    );
    expect(back.get('error_description')).toMatch(/nonce/);
  });

  it("the ID token's signature does not verify", async () => {
    const back = await failing(
      () => (upstreamTamper.signature = true),
      (page) => atProvider(page, 'Confirm identity'),
      cases[3],
    );
    expect(back.get('error_description')).toMatch(/signature/);
  });

  it('an answer that comes back to a browser that never left for the provider gets a page, and ends nothing', async () => {
    const res = await fetch(`${t.url}/identity/callback?code=anything&state=whatever`, {
      headers: { accept: 'text/html' },
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('could not be matched');
  });

  it('the log says why each journey failed, and never a claim value or a secret', () => {
    const failures = logLines.filter((l) => l.includes('identity journey failed'));
    expect(failures.length).toBeGreaterThanOrEqual(4);
    expect(failures.some((l) => l.includes('"reason":"refused"'))).toBe(true);
    expect(failures.some((l) => l.includes('"reason":"invalid"'))).toBe(true);
    for (const line of logLines)
      for (const secret of ['Lovelace', '1815-12-10', IDV.clientSecret]) expect(line).not.toContain(secret);
  });
});

describe('VerifiedIdentity_Other: an answer with a state this browser never sent ends nothing (issue 31 §4, RFC 9700 §4.7)', () => {
  /** The state of the trip a browser starts from its prompt, read off the authorization request it sends to the provider. */
  async function toProvider(page: Page): Promise<string> {
    const [request] = await Promise.all([
      page.waitForRequest((r) => r.url().startsWith(`${issuer}/auth`)),
      page.getByRole('link', { name: /Continue with Example ID check/ }).click(),
    ]);
    await page.getByRole('button', { name: 'Confirm identity' }).waitFor();
    return new URL(request.url()).searchParams.get('state')!;
  }

  /** A top-level navigation to the callback, as a link on any site makes it (the binding cookie is SameSite=Lax, so it goes along). */
  async function attackerLink(page: Page, state: string): Promise<{ status: number | undefined; text: string }> {
    const res = await page.goto(`${t.url}/identity/callback?state=${encodeURIComponent(state)}&code=x`);
    return { status: res?.status(), text: await page.locator('main').innerText() };
  }

  it("a link with an attacker's state, or another browser's state, gets a 400 page naming the state parameter; both journeys then finish with the real provider and their relying parties get their ID tokens", async () => {
    const holder = await browser.newContext();
    const other = await browser.newContext();
    try {
      const s = await startFlow(cases[1]);
      const page = await holder.newPage();
      await page.goto(s.url);
      const promptUrl = page.url();
      await toProvider(page);

      // a second holder's trip, under way at the same time in another browser
      const s2 = await startFlow(cases[0]);
      const otherPage = await other.newPage();
      await otherPage.goto(s2.url);
      const otherState = await toProvider(otherPage);

      for (const state of ['attacker', otherState]) {
        const refused = await attackerLink(page, state);
        expect(refused.status).toBe(400);
        expect(refused.text).toContain('state parameter');
        expect(refused.text).not.toContain(state);
      }
      // the journey has not ended: the prompt still waits for the holder
      const status = await holder.request.get(`${promptUrl}/status`);
      expect(((await status.json()) as { status: string }).status).toBe('pending');

      // back at the provider's login page, the holder confirms: the real answer still ends the journey
      await page.goBack();
      await page.goBack();
      await page.getByRole('button', { name: 'Confirm identity' }).click();
      const back = await backAtClient(page);
      expect(back.get('state')).toBe(s.state);
      expect(back.get('error')).toBeNull();
      expect(await redeem(s, page)).toMatchObject({ given_name: 'Ada', family_name: 'Lovelace', nonce: s.nonce });

      // the other browser's trip, whose state was used above, is untouched too
      await otherPage.getByRole('button', { name: 'Confirm identity' }).click();
      const otherBack = await backAtClient(otherPage);
      expect(otherBack.get('state')).toBe(s2.state);
      expect(await redeem(s2, otherPage)).toMatchObject({ given_name: 'Ada', nonce: s2.nonce });
    } finally {
      await Promise.all([holder.close(), other.close()]);
    }
  });

  it("the provider's own error answer with the trip's state (the person declined) still ends the journey with access_denied", async () => {
    const s = await startFlow(cases[2]);
    const page = await browser.newPage();
    try {
      await page.goto(s.url);
      await toProvider(page);
      expect((await attackerLink(page, 'attacker')).status).toBe(400);
      await page.goBack();
      await page.getByRole('button', { name: 'Decline' }).click();
      const back = await backAtClient(page);
      expect(back.get('state')).toBe(s.state);
      expect(back.get('error')).toBe('access_denied');
    } finally {
      await page.close();
    }
  });
});
