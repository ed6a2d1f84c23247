/**
 * D20, issue 21: key rotation without a gap, across three instances (separate processes, keys generated
 * into one Redis) behind a round-robin proxy, with `npm run keys -- rotate` run as an operator runs it.
 * At each step a flow is in flight: started before the rotation and finished after it was published;
 * started after publication and finished after activation. The new keys are published by every instance
 * before they sign; after activation they sign (ID token, credential, cookies) while the retired keys still
 * verify, and a retired ID-token key leaves the JWKS once the ID-token lifetime has passed. The credential
 * key's certificate (issue 32 §1, x5c) rotates with it: a new leaf of the one local issuer CA in the store.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JWK } from 'jose';
import { Redis } from 'ioredis';
import { createRequire } from 'node:module';
import { newWallet, pushIssuance } from '../helpers/flows.js';
import { Browser, offerFromPage } from '../helpers/rp.js';
import { startRoundRobinProxy, type RoundRobinProxy } from '../helpers/roundRobin.js';
import { startChildInstance, type ChildInstance } from '../helpers/childInstance.js';
import { serviceEnv } from '../helpers/childService.js';
import { REDIS_URL } from '../helpers/stores.js';
import { waitFor } from '../helpers/redisServer.js';
import { secretOf, type SecretEntry } from '../../src/keys/keys.js';
import { checkX5cIndependently } from '../helpers/x5c.js';

const Keygrip = createRequire(import.meta.url)('keygrip') as new (keys: string[]) => { sign(data: string): string };
const run = process.env.TEST_STORE === 'redis' ? describe : describe.skip;
const exec = promisify(execFile);

const CLIENT = { id: 'rotation-client', secret: 'rotation-secret-0123456789abcdef' };
const REDIRECT = 'https://rp.example/cb';
const PIN = '2468';
const attributes = { FirstName: 'Grace', LastName: 'Hopper' };
const ACTIVATE_AFTER_S = 12;
const TOKEN_LIFETIME_S = 3;

const getJson = async (url: string): Promise<any> => {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  expect(res.status, url).toBe(200);
  return res.json();
};
const kidsOf = (set: { keys: JWK[] }) => set.keys.map((k) => k.kid);
const idTokenJwksOf = (instance: string): Promise<{ keys: JWK[] }> =>
  getJson(`${instance}/v2.0/.well-known/openid-configuration/jwks`);
const credentialJwksOf = async (instance: string): Promise<{ keys: JWK[] }> =>
  (await getJson(`${instance}/.well-known/jwt-vc-issuer/wallet`)).jwks;

/** `npm run keys -- ...` as an operator runs it, on an instance's config file. */
async function keysCommand(configFile: string, ...args: string[]): Promise<string> {
  const { stdout } = await exec(
    process.execPath,
    ['--import', 'tsx', join('src', 'main.ts'), 'keys', ...args, '--config', configFile],
    { env: serviceEnv(), timeout: 60_000 },
  );
  return stdout;
}

/** A holder's flow started: pushed and landed on the prompt (its interaction cookie signed now). */
async function startFlow(base: string) {
  const pushed = await pushIssuance(base, {
    clientId: CLIENT.id,
    secret: CLIENT.secret,
    attributes,
    pin: PIN,
    redirectUri: REDIRECT,
  });
  const browser = new Browser(REDIRECT);
  const prompt = await browser.follow(pushed.authorizeUrl.href);
  expect(prompt.html, `prompt at ${prompt.final}`).toBeDefined();
  return { ...pushed, browser, prompt };
}

/** ...and finished: the wallet takes the credential, the browser returns, the client redeems the code. */
async function finishFlow(flow: Awaited<ReturnType<typeof startFlow>>) {
  const wallet = await newWallet();
  await wallet.receive(offerFromPage(flow.prompt.html!), { pin: PIN });
  const done = await flow.browser.follow(`${flow.prompt.final}/continue`);
  expect(done.html, `expected the redirect to the client, at ${done.final}`).toBeUndefined();
  const tokens = await oidc.authorizationCodeGrant(flow.config, new URL(done.final), {
    pkceCodeVerifier: flow.verifier,
    expectedState: flow.state,
    expectedNonce: flow.nonce,
    idTokenExpected: true,
  });
  const credential = wallet.list()[0] as { credential: string };
  const issuerJwt = credential.credential.split('~')[0];
  return {
    idToken: tokens.id_token!,
    credentialKid: decodeProtectedHeader(issuerJwt).kid,
    issuerJwt,
    browser: flow.browser,
  };
}

run('D20: key rotation across three instances on one Redis (npm run keys)', () => {
  let redis: Redis;
  let proxy: RoundRobinProxy;
  let farm: ChildInstance[];
  const prefix = `rot:${randomBytes(4).toString('hex')}:`;
  const dirs: string[] = [];

  beforeAll(async () => {
    redis = new Redis(REDIS_URL);
    proxy = await startRoundRobinProxy();
    farm = await Promise.all(
      [1, 2, 3].map(() => {
        const dir = mkdtempSync(join(tmpdir(), 'vc-rotation-'));
        dirs.push(dir);
        return startChildInstance({
          dir,
          base: proxy.url,
          store: { url: REDIS_URL, keyPrefix: prefix },
          client: CLIENT,
          redirectUri: REDIRECT,
          configure: (c) => ({
            ...c,
            keys: { ...c.keys, rotation: { activateAfter: `PT${ACTIVATE_AFTER_S}S`, reloadInterval: 0.2 } },
            lifetimes: { token: TOKEN_LIFETIME_S },
          }),
        });
      }),
    );
    proxy.setTargets(farm.map((i) => i.url));
  }, 90_000);

  afterAll(async () => {
    await proxy?.close();
    await Promise.all((farm ?? []).map((c) => c.stop()));
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis?.disconnect();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('publishes a rotated key everywhere at once, signs with it only after activateAfter, and keeps the retired one for as long as it is needed', async () => {
    const config = join(farm[0].dir, 'config.json');
    const oldIdKid = kidsOf(await idTokenJwksOf(farm[0].url))[0];
    const oldCredentialKid = kidsOf(await credentialJwksOf(farm[0].url))[0];
    const oldCookies = (JSON.parse((await redis.get(`${prefix}keys:cookies`))!) as SecretEntry[]).map(secretOf);

    // a flow in flight before the rotation
    const before = await startFlow(proxy.url);

    const outputs = await Promise.all(
      ['idToken', 'credential', 'cookies'].map((set) => keysCommand(config, 'rotate', set)),
    );
    // each command says when its key signs: activateAfter from its run
    const activations = outputs.map((out) => Date.parse(/added .* published now, signs from (\S+)/.exec(out)![1]));
    const activatesAt = Math.max(...activations);
    // a second rotation while a key is pending is refused (exit 1), and changes nothing
    await expect(keysCommand(config, 'rotate', 'idToken')).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/already pending/),
    });

    // every instance publishes the new ID-token and credential keys within the reload interval, long before they sign
    let newIdKid = '';
    let newCredentialKid = '';
    await waitFor(
      'every instance to publish the new keys',
      async () => {
        const id = await Promise.all(farm.map((i) => idTokenJwksOf(i.url)));
        const cred = await Promise.all(farm.map((i) => credentialJwksOf(i.url)));
        if (!id.every((s) => s.keys.length === 2) || !cred.every((s) => s.keys.length === 2)) return false;
        newIdKid = kidsOf(id[0]).find((k) => k !== oldIdKid)!;
        newCredentialKid = kidsOf(cred[0]).find((k) => k !== oldCredentialKid)!;
        return (
          id.every((s) => kidsOf(s).includes(newIdKid!)) && cred.every((s) => kidsOf(s).includes(newCredentialKid!))
        );
      },
      5_000,
      100,
    );
    expect(Date.now()).toBeLessThan(activatesAt - 3_000);
    const newCookies = (JSON.parse((await redis.get(`${prefix}keys:cookies`))!) as SecretEntry[])
      .map(secretOf)
      .filter((s) => !oldCookies.includes(s));
    expect(newCookies).toHaveLength(1);

    // the flow started before the rotation finishes before activation: everything still signed with the old keys
    const first = await finishFlow(before);
    expect(decodeProtectedHeader(first.idToken).kid).toBe(oldIdKid);
    expect(first.credentialKid).toBe(oldCredentialKid);
    // issue 32 §1: one local issuer CA for every instance (in the store), written where each instance's operator looks
    const issuerCa = readFileSync(join(farm[0].dir, 'keys', 'issuer-ca.pem'), 'utf8');
    for (const i of farm) expect(readFileSync(join(i.dir, 'keys', 'issuer-ca.pem'), 'utf8')).toBe(issuerCa);
    const oldLeaf = await checkX5cIndependently(first.issuerJwt, { caPem: issuerCa, iss: `${proxy.url}/wallet` });
    const sessionSig = (browser: Browser) => browser.cookies.get('_session_v2.sig');
    const session = (browser: Browser) => browser.cookies.get('_session_v2');
    expect(sessionSig(first.browser)).toBe(new Keygrip([oldCookies[0]]).sign(`_session_v2=${session(first.browser)}`));
    // a flow in flight across the activation: its interaction cookie is signed with the old secret
    const across = await startFlow(proxy.url);
    expect(Date.now()).toBeLessThan(activatesAt);

    await new Promise((r) => setTimeout(r, activatesAt - Date.now() + 500));

    // after activation: the old cookie still verifies (the flow finishes on other instances), and the new
    // keys sign the ID token, the credential and the cookies
    const second = await finishFlow(across);
    expect(decodeProtectedHeader(second.idToken).kid).toBe(newIdKid);
    expect(second.credentialKid).toBe(newCredentialKid);
    // the certificate rotated with the key: a new leaf of the same CA, certifying the new key
    const newLeaf = await checkX5cIndependently(second.issuerJwt, { caPem: issuerCa, iss: `${proxy.url}/wallet` });
    expect(newLeaf.leaf).not.toBe(oldLeaf.leaf);
    expect((await credentialJwksOf(farm[2].url)).keys.find((k) => k.kid === newCredentialKid)).toMatchObject(
      newLeaf.leafJwk,
    );
    expect(sessionSig(second.browser)).toBe(
      new Keygrip([newCookies[0]]).sign(`_session_v2=${session(second.browser)}`),
    );
    // an ID token signed with the retired key still verifies with any instance's JWKS within its lifetime
    for (const i of farm) {
      const jwks = createLocalJWKSet(await idTokenJwksOf(i.url));
      await expect(jwtVerify(second.idToken, jwks)).resolves.toBeDefined();
      expect(kidsOf(await idTokenJwksOf(i.url))).toEqual(expect.arrayContaining([oldIdKid, newIdKid]));
    }
    // a fresh flow after activation runs across instances with the new keys only
    const third = await finishFlow(await startFlow(proxy.url));
    expect(decodeProtectedHeader(third.idToken).kid).toBe(newIdKid);

    // the retired ID-token key leaves every JWKS once the ID-token lifetime has passed; the retired
    // credential key stays published (credentials it signed are valid for P30D)
    await new Promise((r) => setTimeout(r, Math.max(0, activatesAt + TOKEN_LIFETIME_S * 1000 - Date.now() + 300)));
    for (const i of farm) {
      expect(kidsOf(await idTokenJwksOf(i.url))).toEqual([newIdKid]);
      expect(kidsOf(await credentialJwksOf(i.url))).toEqual(
        expect.arrayContaining([oldCredentialKid, newCredentialKid]),
      );
    }
    expect(
      proxy.served.filter((s) => s.status >= 500),
      JSON.stringify(proxy.served),
    ).toEqual([]);

    // what the operator sees
    const listed = await keysCommand(config, 'list');
    expect(listed).toMatch(new RegExp(`active\\s+${newIdKid}`));
    expect(listed).toMatch(new RegExp(`expired\\s+${oldIdKid}`));
    expect(listed).toMatch(new RegExp(`retired\\s+${oldCredentialKid}.*published until`));
    expect(listed).not.toContain(newCookies[0]);
    // the next rotation removes what is past its keep period from the store
    await keysCommand(config, 'rotate', 'idToken');
    const stored = JSON.parse((await redis.get(`${prefix}keys:idToken`))!) as { keys: JWK[] };
    expect(stored.keys.map((k) => k.kid)).not.toContain(oldIdKid);
    expect(stored.keys).toHaveLength(2);
    expect(await redis.ttl(`${prefix}keys:idToken`)).toBe(-1);
  }, 120_000);
});
