/**
 * D14: instances are stateless. Three service instances (one config, one keys directory, one Redis and
 * key prefix, each its own Redis connection and HTTP server) behind a round-robin proxy whose URL is the
 * baseUrl: every request of a flow goes to the next instance, so PAR, authorise, the wallet's requests
 * and the token exchange are served by different instances, and the flow still succeeds. Single use
 * (D16) holds across instances: 50 concurrent redemptions of one code spread over the three instances,
 * exactly one wins.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import { offerFromPage, postForm, Browser, resolveOfferLink } from '../helpers/rp.js';
import { expectExactlyOneWinner } from '../helpers/assertions.js';
import { holderCompletesIssuance, holderCompletesVerification, newWallet, pushIssuance } from '../helpers/flows.js';
import { SECRETS, REDIRECT } from '../helpers/service.js';
import { startInstancesBehindProxy, type InstancesBehindProxy } from '../helpers/roundRobin.js';
import { startRedis, type RedisProcess } from '../helpers/redisServer.js';

// These tests start their own Redis (and service instances), whatever TEST_STORE says; vitest runs
// test/e2e once per store project, so they run only in the flows-redis project and skip the duplicate
// run in flows-memory (describe.skipIf on 'memory' would also run them under any other/unset TEST_STORE).
const run = process.env.TEST_STORE === 'redis' ? describe : describe.skip;

const PRE_AUTH = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';
const PIN = '4321';
const attributes = { FirstName: 'Ada', LastName: 'Lovelace', Email: 'ada@example.com' };
const CLIENT = { id: 'issuer-pkce', secret: SECRETS.pkceIssuer };

let redis: RedisProcess | undefined;
let farm: InstancesBehindProxy | undefined;

run('D14: three instances behind a round-robin proxy, one Redis', () => {
  beforeAll(async () => {
    redis = await startRedis();
    farm = await startInstancesBehindProxy({
      count: 3,
      store: { url: redis.url, keyPrefix: `mi:${randomBytes(4).toString('hex')}:` },
    });
  });
  afterAll(async () => {
    await farm?.stop();
    await redis?.destroy();
  });

  /** PAR with openid-client (Version 2, PKCE), through the proxy. */
  const parThroughProxy = (base: string) =>
    pushIssuance(base, { clientId: CLIENT.id, secret: CLIENT.secret, attributes, pin: PIN, redirectUri: REDIRECT });

  it('an issuance flow whose steps land on different instances succeeds', async () => {
    const { proxy, baseUrl } = farm!;
    proxy.reset();
    const { config, verifier, state, nonce, authorizeUrl } = await parThroughProxy(baseUrl);
    const wallet = await newWallet();
    const { callbackUrl, browser } = await holderCompletesIssuance(authorizeUrl.href, {
      redirectUri: REDIRECT,
      wallet,
      pin: PIN,
    });
    // the proxy kept every Set-Cookie line of a response (cookie and signature come in separate lines)
    expect([...browser.cookies.keys()]).toEqual(expect.arrayContaining(['_interaction_v2', '_interaction_v2.sig']));
    const tokens = await oidc.authorizationCodeGrant(config, new URL(callbackUrl), {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
    });

    // the flow succeeded: ID token claims and the credential in the wallet carry the attributes
    expect(tokens.claims()).toMatchObject({ ...attributes, iss: baseUrl, aud: CLIENT.id, nonce });
    const [stored] = wallet.list();
    expect(stored.claims).toEqual(attributes);

    // and its steps were served by different instances (from the proxy's record)
    const steps = {
      par: proxy.instancesFor(/\/par$/, 'POST'),
      authorise: proxy.instancesFor(/\/authorize$/, 'GET'),
      walletToken: proxy.instancesFor(/^\/wallet\/token$/, 'POST'),
      walletCredential: proxy.instancesFor(/^\/wallet\/credential$/, 'POST'),
      tokenExchange: proxy.instancesFor(/^\/v2\.0\/oidc\/token$/, 'POST'),
    };
    for (const [step, served] of Object.entries(steps))
      expect(served, `${step} in ${JSON.stringify(proxy.served)}`).toHaveLength(1);
    const stepInstances = Object.values(steps).map((s) => s[0]);
    expect(new Set(stepInstances).size, JSON.stringify(steps)).toBeGreaterThanOrEqual(2);
    // the hand-offs through the store crossed instances: the request_uri written at PAR was read by
    // another instance at authorise, the wallet's access token was minted and used on different ones
    expect(steps.authorise[0]).not.toBe(steps.par[0]);
    expect(steps.walletCredential[0]).not.toBe(steps.walletToken[0]);
    // every instance took part
    expect(new Set(proxy.served.map((s) => s.instance)).size).toBe(3);
    expect(
      proxy.served.filter((s) => s.status >= 500),
      JSON.stringify(proxy.served),
    ).toEqual([]);
  });

  it('D16: 50 concurrent redemptions of one authorization code across the instances: exactly one succeeds', async () => {
    const { proxy, baseUrl } = farm!;
    const { verifier, authorizeUrl } = await parThroughProxy(baseUrl);
    const { callbackUrl } = await holderCompletesIssuance(authorizeUrl.href, {
      redirectUri: REDIRECT,
      wallet: await newWallet(),
      pin: PIN,
    });
    const code = new URL(callbackUrl).searchParams.get('code');
    expect(code, callbackUrl).toBeTruthy();

    proxy.reset();
    const results = await Promise.all(
      Array.from({ length: 50 }, () =>
        postForm(`${baseUrl}/v2.0/oidc/token`, {
          grant_type: 'authorization_code',
          client_id: CLIENT.id,
          client_secret: CLIENT.secret,
          code: code!,
          redirect_uri: REDIRECT,
          code_verifier: verifier,
        }),
      ),
    );
    expect(new Set(proxy.served.map((s) => s.instance)).size).toBe(3);
    expectExactlyOneWinner(results);
  });

  it('D16: 50 concurrent redemptions of one pre-authorized code across the instances: exactly one succeeds', async () => {
    const { proxy, baseUrl } = farm!;
    const { authorizeUrl } = await parThroughProxy(baseUrl);
    const browser = new Browser(REDIRECT);
    const prompt = await browser.follow(authorizeUrl.href);
    expect(prompt.html, prompt.final).toBeTruthy();
    const offer = await resolveOfferLink(offerFromPage(prompt.html!));
    const preAuthorizedCode: string = offer.grants[PRE_AUTH]['pre-authorized_code'];

    proxy.reset();
    const results = await Promise.all(
      Array.from({ length: 50 }, () =>
        postForm(`${offer.credential_issuer}/token`, {
          grant_type: PRE_AUTH,
          'pre-authorized_code': preAuthorizedCode,
          tx_code: PIN,
        }),
      ),
    );
    expect(new Set(proxy.served.map((s) => s.instance)).size).toBe(3);
    expectExactlyOneWinner(results);
  });

  it('a verification flow whose steps land on different instances succeeds', async () => {
    const { proxy, baseUrl } = farm!;
    // a credential to present, issued through the same farm
    const issued = await parThroughProxy(baseUrl);
    const wallet = await newWallet();
    await holderCompletesIssuance(issued.authorizeUrl.href, { redirectUri: REDIRECT, wallet, pin: PIN });

    proxy.reset();
    const config = issued.config;
    const verifier = oidc.randomPKCECodeVerifier();
    const nonce = oidc.randomNonce();
    const authorizeUrl = await oidc.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: REDIRECT,
      scope: 'openid EmployeeBadge',
      state: 'mi-verify',
      nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const { callbackUrl } = await holderCompletesVerification(authorizeUrl.href, { redirectUri: REDIRECT, wallet });
    const tokens = await oidc.authorizationCodeGrant(config, new URL(callbackUrl), {
      pkceCodeVerifier: verifier,
      expectedState: 'mi-verify',
      expectedNonce: nonce,
    });
    expect(tokens.claims()).toMatchObject({ ...attributes, iss: baseUrl, aud: CLIENT.id });

    const steps = {
      par: proxy.instancesFor(/\/par$/, 'POST'),
      requestObject: proxy.instancesFor(/^\/vp\/request\//, 'POST'), // the wallet POSTs to the request URI (OpenID4VP 1.0 §5.10)
      response: proxy.instancesFor(/^\/vp\/response$/, 'POST'),
      tokenExchange: proxy.instancesFor(/^\/v2\.0\/oidc\/token$/, 'POST'),
    };
    for (const [step, served] of Object.entries(steps))
      expect(served, `${step} in ${JSON.stringify(proxy.served)}`).toHaveLength(1);
    expect(steps.response[0]).not.toBe(steps.requestObject[0]);
    expect(new Set(proxy.served.map((s) => s.instance)).size).toBe(3);
    expect(
      proxy.served.filter((s) => s.status >= 500),
      JSON.stringify(proxy.served),
    ).toEqual([]);
  });
});
