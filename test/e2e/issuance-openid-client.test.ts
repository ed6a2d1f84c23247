import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { startTestService, SECRETS, REDIRECT, type TestService } from '../helpers/service.js';
import { makeHint } from '../helpers/rp.js';
import { holderCompletesIssuance, newWallet } from '../helpers/flows.js';
import { verifySdJwtVcIndependently } from '../helpers/sdjwt.js';

/**
 * The whole issuance journey as a relying party lives it, with openid-client 6 unmodified: discovery,
 * PAR (or not), PKCE, the holder's wallet step with a PIN, the code exchange, and the ID token
 * validated through the JWKS. The credential in the wallet is then verified independently.
 */
let t: TestService;

beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => t?.stop());

const attributes = { FirstName: 'Ada', LastName: 'Lovelace', Email: 'ada@example.com' };

type Case = {
  name: string;
  discovery: string;
  issuer: (url: string) => string;
  scope: string;
  par: boolean;
  pkce: boolean;
};
const cases: Case[] = [
  {
    name: 'Version 2, PAR',
    discovery: '/v2.0/.well-known/openid-configuration',
    issuer: (u) => u,
    scope: 'openid issue.EmployeeBadge',
    par: true,
    pkce: true,
  },
  {
    name: 'Version 2, without PAR (D6)',
    discovery: '/v2.0/.well-known/openid-configuration',
    issuer: (u) => u,
    scope: 'openid issue.EmployeeBadge',
    par: false,
    pkce: true,
  },
  {
    name: 'Version 1, PAR',
    discovery: '/oidc/.well-known/openid-configuration',
    issuer: (u) => `${u}/oidc`,
    scope: 'issue.EmployeeBadge',
    par: true,
    pkce: false,
  },
];

describe.each(cases)('issuance end to end: $name', (c) => {
  it('issues a credential into the wallet and an ID token whose claims match it', async () => {
    const clientId = c.pkce ? 'issuer-pkce' : 'other';
    const secret = c.pkce ? SECRETS.pkceIssuer : SECRETS.other;
    const config = await oidc.discovery(
      new URL(`${t.url}${c.discovery}`),
      clientId,
      secret,
      oidc.ClientSecretPost(secret),
      {
        execute: [oidc.allowInsecureRequests],
      },
    );
    expect(config.serverMetadata().issuer).toBe(c.issuer(t.url));

    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const hint = await makeHint({
      clientId,
      secret,
      audience: c.issuer(t.url),
      claims: { ...attributes, PinCode: '4321' },
    });
    const params: Record<string, string> = {
      redirect_uri: REDIRECT,
      scope: c.scope,
      state,
      nonce,
      id_token_hint: hint,
    };
    if (c.pkce)
      Object.assign(params, {
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      });
    const authorizeUrl = c.par
      ? await oidc.buildAuthorizationUrlWithPAR(config, params)
      : oidc.buildAuthorizationUrl(config, params);

    const wallet = await newWallet();
    const { callbackUrl } = await holderCompletesIssuance(authorizeUrl.href, {
      redirectUri: REDIRECT,
      wallet,
      pin: '4321',
    });

    const tokens = await oidc.authorizationCodeGrant(config, new URL(callbackUrl), {
      pkceCodeVerifier: c.pkce ? verifier : undefined,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
    });
    // D3: access_token is the ID token; token_type Bearer; expires_in a number
    expect(tokens.access_token).toBe(tokens.id_token);
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(typeof tokens.expires_in).toBe('number');
    expect(tokens.scope).toBe(c.scope);

    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ ...attributes, iss: c.issuer(t.url), aud: clientId, nonce });
    expect(claims.sub).toBe(claims.SerialNumber); // D2
    expect(String(claims.ExpiresAt)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(claims.nbf).toBeTypeOf('number');
    expect(claims.PinCode).toBeUndefined();

    // spec: Issued ID token header alg RS256, typ JWT, kid; verifiable with the key set at jwks_uri
    const header = decodeProtectedHeader(tokens.id_token!);
    expect(header).toMatchObject({ alg: 'RS256', typ: 'JWT' });
    expect(header.kid).toBeTruthy();
    await jwtVerify(tokens.id_token!, createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri!)), {
      issuer: c.issuer(t.url),
      audience: clientId,
    });

    // The credential, verified with nothing of the issuing code: signature, disclosures, cnf, exp
    const [stored] = wallet.list();
    const issuerMeta = await (await fetch(`${t.url}/.well-known/jwt-vc-issuer/wallet`)).json();
    const vc = await verifySdJwtVcIndependently(stored.credential, issuerMeta.jwks);
    expect(vc.claims).toMatchObject(attributes);
    expect(vc.disclosures).toBe(Object.keys(attributes).length);
    expect(vc.payload.exp).toBe(Math.floor(Date.parse(String(claims.ExpiresAt)) / 1000));
    const { d: _d, ...holderPublic } = stored.holderKey;
    expect((vc.payload.cnf as { jwk: Record<string, unknown> }).jwk).toMatchObject({
      x: holderPublic.x,
      y: holderPublic.y,
    });
  });
});
