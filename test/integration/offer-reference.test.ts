import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestService, SECRETS, REDIRECT, type TestService } from '../helpers/service.js';
import { Browser, makeHint, offerFromPage, pkcePair } from '../helpers/rp.js';
import { newWallet, pushAuthorization } from '../helpers/flows.js';

/** OpenID4VCI 1.0 §4.1.3: the prompt's link carries the offer by reference, so its QR code stays small. */
let t: TestService;
beforeAll(async () => {
  t = await startTestService({
    lifetimes: { par: 60, code: 60, token: 60, offer: 2, interaction: 600, continuation: 300 },
  });
});
afterAll(async () => t?.stop());

async function promptLink(): Promise<string> {
  const { challenge } = pkcePair();
  const hint = await makeHint({
    clientId: 'issuer-pkce',
    secret: SECRETS.pkceIssuer,
    audience: t.url,
    claims: { FirstName: 'Ada', LastName: 'Lovelace' },
  });
  const { authorizeUrl } = await pushAuthorization(t.url, {
    scope: 'openid issue.EmployeeBadge',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    id_token_hint: hint,
  });
  const page = await new Browser(REDIRECT).follow(authorizeUrl);
  return offerFromPage(page.html!);
}

describe('credential offer by reference', () => {
  it('the link carries credential_offer_uri under the credential issuer, answering the offer as JSON', async () => {
    const link = await promptLink();
    const uri = new URL(link).searchParams.get('credential_offer_uri')!;
    expect(link.length).toBeLessThan(200);
    expect(uri.startsWith(`${t.url}/wallet/offers/`)).toBe(true);
    const res = await fetch(uri);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const offer = await res.json();
    expect(offer.credential_issuer).toBe(`${t.url}/wallet`);
    expect(offer.credential_configuration_ids).toEqual(['EmployeeBadge']);
    expect(offer.grants['urn:ietf:params:oauth:grant-type:pre-authorized_code']['pre-authorized_code']).toBeTruthy();
  });

  it('answers 404 with a JSON error for an unknown or malformed reference, and 405 for POST', async () => {
    for (const ref of ['x'.repeat(43), 'x'.repeat(32), 'short', 'dots..and%2Fslash']) {
      const res = await fetch(`${t.url}/wallet/offers/${ref}`);
      expect(res.status).toBe(404);
      expect((await res.json()).error).toBe('invalid_request');
    }
    expect((await fetch(`${t.url}/wallet/offers/${'a'.repeat(32)}`, { method: 'POST' })).status).toBe(405);
  });

  it('stops answering once the credential is issued: the offer is used up', async () => {
    const link = await promptLink();
    const uri = new URL(link).searchParams.get('credential_offer_uri')!;
    await (await newWallet()).receive(link);
    expect((await fetch(uri)).status).toBe(404);
  });

  it('stops answering once the offer has expired', async () => {
    const uri = new URL(await promptLink()).searchParams.get('credential_offer_uri')!;
    await sleep(2500);
    expect((await fetch(uri)).status).toBe(404);
  });
});
