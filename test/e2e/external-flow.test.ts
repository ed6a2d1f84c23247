import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import { startTestService, REDIRECT, type TestService } from '../helpers/service.js';
import { Browser, makeHint, offerFromPage } from '../helpers/rp.js';
import { newWallet, requestFromPage } from '../helpers/flows.js';
import { startWebhookReceiver, webhookSecret, type ReceivedWebhook } from '../helpers/webhookReceiver.js';
import type { DevWallet } from '../../src/wallet/holder.js';

/**
 * D13, the External Client flow as a relying party lives it: openid-client unmodified starts the flow
 * (scope External, state), the holder's browser shows the prompt and stays there, the wallet completes
 * the step, a real HTTP receiver on loopback verifies the signed webhook with the standardwebhooks
 * package, and the relying party continues with context_id and redeems the code.
 */
const CLIENT = 'external-rp';
const SECRET = 'external-rp-secret-0123456789';
const secret = webhookSecret();
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
let t: TestService;
let wallet: DevWallet;
const badge = { FirstName: 'Grace', LastName: 'Hopper', Email: 'grace@example.com' };

beforeAll(async () => {
  receiver = await startWebhookReceiver(secret);
  t = await startTestService((base) => ({
    clients: [
      {
        clientId: CLIENT,
        clientName: 'External RP',
        clientSecret: SECRET,
        redirectUris: [REDIRECT],
        pkce: 'required',
        scopes: ['issue.EmployeeBadge', 'EmployeeBadge', 'External'],
        webhook: { url: receiver.url, secret },
      },
    ],
    baseUrl: base,
  }));
  wallet = await newWallet();
});
afterAll(async () => {
  await t?.stop();
  await receiver?.close();
});

const discover = () =>
  oidc.discovery(
    new URL(`${t.url}/v2.0/.well-known/openid-configuration`),
    CLIENT,
    SECRET,
    oidc.ClientSecretPost(SECRET),
    { execute: [oidc.allowInsecureRequests] },
  );

/** The relying party's server continues the flow: authorise with context_id (and request_uri), no cookies. */
async function continueWith(params: Record<string, string>): Promise<Response> {
  return fetch(`${t.url}/v2.0/oidc/authorize?${new URLSearchParams(params)}`, { redirect: 'manual' });
}

describe.each([
  { name: 'issuance, PAR', kind: 'issuance', par: true },
  { name: 'issuance, without PAR', kind: 'issuance', par: false },
  { name: 'verification, PAR', kind: 'verification', par: true },
  { name: 'verification, without PAR', kind: 'verification', par: false },
] as const)('External Client flow end to end: $name (D13; spec Events, authorise context_id)', (c) => {
  it('the browser stays on the prompt, the webhook carries state and a ContinuationContext, context_id redeems to the same ID token claims', async () => {
    const config = await discover();
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const params: Record<string, string> = {
      redirect_uri: REDIRECT,
      scope: c.kind === 'issuance' ? 'openid issue.EmployeeBadge External' : 'openid EmployeeBadge External',
      state,
      nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    };
    if (c.kind === 'issuance')
      params.id_token_hint = await makeHint({ clientId: CLIENT, secret: SECRET, audience: t.url, claims: badge });
    const url = c.par
      ? await oidc.buildAuthorizationUrlWithPAR(config, params)
      : oidc.buildAuthorizationUrl(config, params);

    const browser = new Browser(REDIRECT);
    const prompt = await browser.follow(url.href);
    expect(prompt.html, 'the prompt page').toBeDefined();
    expect(prompt.html).toContain('data-handover="true"');
    if (c.kind === 'issuance') await wallet.receive(offerFromPage(prompt.html!));
    else expect((await wallet.present(requestFromPage(prompt.html!))).status).toBe(200);

    const hook: ReceivedWebhook = await receiver.next((h) => h.payload.data.state === state);
    expect(hook.payload).toMatchObject({ type: 'flow.completed', data: { state, client_id: CLIENT, flow: c.kind } });
    expect(new Date(hook.payload.timestamp).toISOString()).toBe(hook.payload.timestamp);
    expect(hook.payload.data.ContinuationContext).toMatch(/^[A-Za-z0-9_-]{43}$/); // 256 bits
    expect(Object.keys(hook.payload.data).sort()).toEqual(['ContinuationContext', 'client_id', 'flow', 'state']);
    expect(hook.raw).not.toContain('Hopper'); // no attribute values in a webhook

    // the browser is told that the app continues, and is not sent back
    const status = await browser.follow(`${prompt.final}/status`);
    expect(JSON.parse(status.html!)).toMatchObject({ status: 'done', handover: true });
    const after = await browser.follow(`${prompt.final}/continue`);
    expect(after.final).toContain('/interaction/');
    expect(after.html).toContain('will continue from here');

    const continued: Record<string, string> = { client_id: CLIENT, context_id: hook.payload.data.ContinuationContext };
    if (c.par) continued.request_uri = new URL(url).searchParams.get('request_uri')!;
    const res = await continueWith(continued);
    expect(res.status, await res.clone().text()).toBe(302);
    const callback = new URL(res.headers.get('location')!);
    expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT);
    expect(callback.searchParams.get('state')).toBe(state);
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ FirstName: 'Grace', LastName: 'Hopper', aud: CLIENT, nonce, iss: t.url });
    if (c.kind === 'issuance') expect(claims.SerialNumber).toBe(claims.sub);

    // single use
    const again = await continueWith(continued);
    expect(again.status).toBe(400);
    expect(await again.json()).toMatchObject({
      error: 'invalid_request',
      error_description: expect.stringContaining('context_id'),
    });
  });
});
