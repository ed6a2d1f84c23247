import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, expect } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from './browser.js';
import type { DevWallet } from '../../src/wallet/holder.js';
import { holderCompletesIssuance, newWallet } from './flows.js';
import { makeHint, pkcePair, postForm } from './rp.js';
import { freePort, waitFor } from './redisServer.js';
import { REDIRECT, startTestService, type TestService } from './service.js';
import { startTlsFront, type TlsFront } from './tlsFront.js';

/**
 * What the relying-party recipes (docs/relying-parties.md) are run against: the service behind TLS
 * (tlsFront.ts) with one of the operator's discovery settings, a relying party started as its own
 * process exactly as the recipe says, Chromium as the holder's browser and the dev wallet as their phone.
 */

/** The recipes' client: one per library, with that library's redirect URI. */
export const RECIPE_CLIENT = { clientId: 'hr-portal', clientSecret: 'hr-portal-secret-0123456789abcdef' };

/**
 * The service's settings the recipes must work under (docs/relying-parties.md, "Which issuer"):
 * - `interface`: the interface as written (Version 2's issuer `{base}`, its document under /v2.0; Version 1
 *   at the root). Libraries are given Version 2's discovery URL, or its endpoints where they take no URL.
 * - `v2Issuer`: Version 2's issuer is `{base}/v2.0`, where its document already is; Version 1 unchanged.
 * - `v1Off`: Version 1 turned off; the root document is Version 2's, issuer `{base}`.
 */
export type Setting = 'interface' | 'v2Issuer' | 'v1Off';
export const SETTINGS: Setting[] = ['interface', 'v2Issuer', 'v1Off'];

const SETTING_CONFIG: Record<Setting, Record<string, unknown>> = {
  interface: {},
  v2Issuer: { versions: { v2Issuer: 'v2.0' } },
  v1Off: { versions: { v1: false } },
};

/** What a library given only an issuer is given under each setting (the Version 2 issuer). */
export function v2Issuer(setting: Setting, base: string): string {
  return setting === 'v2Issuer' ? `${base}/v2.0` : base;
}

/**
 * Version 2's discovery URL as a library that takes one is given it: the issuer's
 * (`{issuer}/.well-known/openid-configuration`), or under the interface as written the document's own.
 */
export function v2DiscoveryUrl(setting: Setting, base: string): string {
  return setting === 'interface'
    ? `${base}/v2.0/.well-known/openid-configuration`
    : `${v2Issuer(setting, base)}/.well-known/openid-configuration`;
}

/** Starts the service with `setting` behind `front`, for the recipe client with `redirectUris`. */
export async function startRecipeService(
  front: TlsFront,
  setting: Setting,
  redirectUris: string[],
): Promise<TestService> {
  const service = await startTestService({
    baseUrl: front.url,
    clients: [
      {
        ...RECIPE_CLIENT,
        clientName: 'HR portal',
        redirectUris: [...redirectUris, REDIRECT],
        pkce: 'required',
        scopes: ['issue.EmployeeBadge', 'EmployeeBadge'],
      },
    ],
    ...SETTING_CONFIG[setting],
  });
  front.forwardTo(service.listener);
  return service;
}

/** How the relying party authenticated at `path` (the last such request through the front): `Basic`, or `post` without an Authorization header. */
export function clientAuthAt(front: TlsFront, path: string): string | undefined {
  const request = [...front.requests].reverse().find((r) => r.method === 'POST' && r.path === path);
  return request && (request.scheme ?? 'post');
}

/** A relying party as its own process; resolves once it printed `ready` (its output is in `output()`). */
export async function startProcess(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: string | RegExp,
): Promise<{ child: ChildProcess; output(): string; stop(): Promise<void> }> {
  let output = '';
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d) => (output += String(d)));
  child.stderr!.on('data', (d) => (output += String(d)));
  await waitFor(
    `${command} ${args.join(' ')} to be ready`,
    async () => {
      if (child.exitCode !== null) return true; // waitFor takes a throw for "not yet"
      return typeof ready === 'string' ? output.includes(ready) : ready.test(output);
    },
    60_000,
    100,
  ).catch((err: Error) => {
    child.kill();
    throw new Error(`${err.message}\n${output}`);
  });
  if (child.exitCode !== null) throw new Error(`${command} ${args.join(' ')} exited (${child.exitCode}): ${output}`);
  return {
    child,
    output: () => output,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill();
      }),
  };
}

/** The environment of a relying party: this process's (which trusts the test CA, test/tlsTrust.ts) and `env`. */
export function withEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return { ...process.env, ...env };
}

/**
 * The holder's part of an issuance in Chromium: `start` takes the page from the relying party to the
 * prompt, the wallet takes the offer shown there, and the page continues on its own until it reaches
 * `arrive`. Returns the JSON the relying party shows there (the ID token's claims, as each recipe prints).
 */
export async function receiveInBrowser(
  page: Page,
  o: { start(page: Page): Promise<void>; wallet: DevWallet; arrive: string },
): Promise<Record<string, unknown>> {
  await o.start(page);
  const link = page.locator('a[href^="openid-credential-offer://"]');
  await link.waitFor({ timeout: 15_000 });
  await o.wallet.receive((await link.getAttribute('href'))!);
  return arrival(page, o.arrive);
}

/** The holder's part of a verification in Chromium: as receiveInBrowser, the wallet presenting to the QR code's request. */
export async function presentInBrowser(
  page: Page,
  o: { start(page: Page): Promise<void>; wallet: DevWallet; arrive: string },
): Promise<Record<string, unknown>> {
  await o.start(page);
  const qr = page.locator('[data-wallet-link^="openid4vp://"]');
  await qr.waitFor({ timeout: 15_000 });
  const answer = await o.wallet.present((await qr.getAttribute('data-wallet-link'))!);
  expect(answer.status, JSON.stringify(answer)).toBe(200);
  return arrival(page, o.arrive);
}

async function arrival(page: Page, arrive: string): Promise<Record<string, unknown>> {
  await page
    .waitForURL((u) => u.href.startsWith(arrive), { timeout: 20_000 })
    .catch(async (err: Error) => {
      throw new Error(`${err.message}: at ${page.url()}: ${(await page.locator('body').innerText()).slice(0, 500)}`);
    });
  const text = await page.locator('body').innerText();
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error(`the relying party showed no claims at ${page.url()}: ${text.slice(0, 500)}`);
  }
}

/**
 * An EmployeeBadge (Ada Lovelace) into `wallet` from `service`, pushed by the recipe client itself (to the
 * test redirect URI, REDIRECT): for a library whose recipe only verifies.
 */
export async function issueBadge(service: TestService, setting: Setting, wallet: DevWallet): Promise<void> {
  const { challenge } = pkcePair();
  const pushed = await postForm(`${service.url}/v2.0/oidc/par`, {
    client_id: RECIPE_CLIENT.clientId,
    client_secret: RECIPE_CLIENT.clientSecret,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'openid issue.EmployeeBadge',
    nonce: 'n',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    id_token_hint: await makeHint({
      clientId: RECIPE_CLIENT.clientId,
      secret: RECIPE_CLIENT.clientSecret,
      audience: v2Issuer(setting, service.url),
      claims: { FirstName: 'Ada', LastName: 'Lovelace' },
    }),
  });
  expect(pushed.status, JSON.stringify(pushed.body)).toBe(201);
  const authorize = new URL(`${service.url}/v2.0/oidc/authorize`);
  authorize.search = new URLSearchParams({
    client_id: RECIPE_CLIENT.clientId,
    request_uri: pushed.body.request_uri,
  }).toString();
  await holderCompletesIssuance(authorize.href, { redirectUri: REDIRECT, wallet });
}

/**
 * What a recipe's tests share across the settings (registered as beforeAll/afterAll of the calling
 * describe): the TLS front, Chromium, the dev wallet (`newWallet()` for each service), and the relying
 * party's port and origin (`http://localhost:<port>`). `page()` opens a page in a fresh browser context that trusts the front.
 */
export function recipeWorld() {
  const world = {} as { front: TlsFront; browser: Browser; wallet: DevWallet; port: number; app: string };
  const contexts: BrowserContext[] = [];
  beforeAll(async () => {
    [world.front, world.browser, world.port] = await Promise.all([startTlsFront(), launchChromium(), freePort()]);
    world.app = `http://localhost:${world.port}`;
  }, 60_000);
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await world.browser?.close();
    await world.front?.stop();
  });
  return Object.assign(world, {
    /**
     * A new wallet, for a new service: credentials of a service that was stopped name status lists no
     * running service serves, and a wallet presents the first credential that matches.
     */
    async newWallet(): Promise<void> {
      world.wallet = await newWallet();
    },
    /** a page of a new browser context: the holder's browser, which trusts the front's test CA */
    async page(): Promise<Page> {
      const context = await world.browser.newContext({ ignoreHTTPSErrors: true });
      contexts.push(context);
      return context.newPage();
    },
  });
}
