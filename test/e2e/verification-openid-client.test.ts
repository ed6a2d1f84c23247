import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import { calculateJwkThumbprint, decodeProtectedHeader } from 'jose';
import { startTestService, SECRETS, REDIRECT, type TestService } from '../helpers/service.js';
import { makeHint, postForm, pkcePair } from '../helpers/rp.js';
import { holderCompletesIssuance, holderCompletesVerification, newWallet } from '../helpers/flows.js';
import { ENDPOINT_SETS } from '../helpers/endpointSets.js';
import type { DevWallet } from '../../src/wallet/holder.js';

/**
 * Verification as a relying party lives it, with openid-client 6 unmodified, for the four endpoint
 * sets of the spec (Version 2 PAR and non-PAR, Version 1 PAR, Version 1 non-PAR discovered from the
 * root document). The holder's wallet holds credentials issued through the issuance flow.
 */
let t: TestService;
let wallet: DevWallet;
const badge = { FirstName: 'Ada', LastName: 'Lovelace', Email: 'ada@example.com' };
const card = { MemberName: 'Ada Lovelace', MemberNumber: 1815 };

async function issue(
  type: 'EmployeeBadge' | 'MembershipCard',
  claims: Record<string, unknown>,
  pin?: string,
): Promise<void> {
  const { verifier, challenge } = pkcePair();
  void verifier;
  const hint = await makeHint({
    clientId: 'issuer-pkce',
    secret: SECRETS.pkceIssuer,
    audience: t.url,
    claims: { ...claims, ...(pin ? { PinCode: pin } : {}) },
  });
  const par = await postForm(`${t.url}/v2.0/oidc/par`, {
    client_id: 'issuer-pkce',
    client_secret: SECRETS.pkceIssuer,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: `openid issue.${type}`,
    nonce: 'n',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    id_token_hint: hint,
  });
  expect(par.status).toBe(201);
  await holderCompletesIssuance(
    `${t.url}/v2.0/oidc/authorize?client_id=issuer-pkce&request_uri=${encodeURIComponent(par.body.request_uri)}`,
    { redirectUri: REDIRECT, wallet, pin },
  );
}

beforeAll(async () => {
  t = await startTestService();
  wallet = await newWallet();
  await issue('EmployeeBadge', badge, '1234');
  await issue('MembershipCard', card);
});
afterAll(async () => t?.stop());

// D3: Version 1 non-PAR token responses carry the request's state
const cases = ENDPOINT_SETS.map((set) => ({ ...set, stateInToken: set.name.startsWith('Version 1, without PAR') }));

describe.each(cases)('verification end to end: $name', (c) => {
  it('returns an ID token with the verified attributes of the presented credential', async () => {
    const config = await oidc.discovery(
      new URL(`${t.url}${c.discovery}`),
      c.clientId,
      c.secret,
      oidc.ClientSecretPost(c.secret),
      { execute: [oidc.allowInsecureRequests] },
    );
    expect(config.serverMetadata().issuer).toBe(c.issuer(t.url));
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const params: Record<string, string> = { redirect_uri: REDIRECT, scope: 'openid EmployeeBadge', state, nonce };
    if (c.pkce)
      Object.assign(params, {
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      });
    const url = c.par
      ? await oidc.buildAuthorizationUrlWithPAR(config, params)
      : oidc.buildAuthorizationUrl(config, params);

    const { callbackUrl, presented } = await holderCompletesVerification(url.href, { redirectUri: REDIRECT, wallet });
    expect(presented.status).toBe(200);
    // RFC 9207: the document says authorization_response_iss_parameter_supported, the redirect carries iss
    expect(config.serverMetadata().authorization_response_iss_parameter_supported).toBe(true);
    expect(new URL(callbackUrl).searchParams.get('iss')).toBe(c.issuer(t.url));
    const tokens = await oidc.authorizationCodeGrant(config, new URL(callbackUrl), {
      pkceCodeVerifier: c.pkce ? verifier : undefined,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ ...badge, iss: c.issuer(t.url), aud: c.clientId, nonce });
    expect(claims.MemberName).toBeUndefined(); // only what was asked for
    // D2: sub is the JWK thumbprint of the holder key bound to the presented credential
    const held = wallet.list().find((s) => s.vct?.endsWith('EmployeeBadge'))!;
    const { d: _d, ...holderPublic } = held.holderKey;
    expect(claims.sub).toBe(await calculateJwkThumbprint(holderPublic));
    expect(decodeProtectedHeader(tokens.id_token!)).toMatchObject({ alg: 'RS256', typ: 'JWT' });
    expect(tokens.access_token).toBe(tokens.id_token);
    if (c.stateInToken) expect((tokens as unknown as { state?: string }).state).toBe(state); // D3: Version 1 non-PAR
  });
});

describe('verification of two credential types at once', () => {
  it('returns the attributes of both in one ID token', async () => {
    const config = await oidc.discovery(
      new URL(`${t.url}/v2.0/.well-known/openid-configuration`),
      'issuer-pkce',
      SECRETS.pkceIssuer,
      oidc.ClientSecretPost(SECRETS.pkceIssuer),
      { execute: [oidc.allowInsecureRequests] },
    );
    const verifier = oidc.randomPKCECodeVerifier();
    const nonce = oidc.randomNonce();
    const url = await oidc.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: REDIRECT,
      scope: 'openid EmployeeBadge MembershipCard',
      nonce,
      state: 's2',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const { callbackUrl } = await holderCompletesVerification(url.href, { redirectUri: REDIRECT, wallet });
    const tokens = await oidc.authorizationCodeGrant(config, new URL(callbackUrl), {
      pkceCodeVerifier: verifier,
      expectedState: 's2',
      expectedNonce: nonce,
    });
    expect(tokens.claims()).toMatchObject({ ...badge, ...card, nonce });
    expect(tokens.scope).toBe('openid EmployeeBadge MembershipCard');
  });
});
