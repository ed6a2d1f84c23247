/**
 * openid-client 6 as a relying party configures it in a few lines, against every discovery document of
 * every setting: discovery (from the issuer where the document lives at the issuer's well-known address,
 * OIDC Discovery 1.0 §4), HTTP Basic client authentication (client_secret_basic, RFC 6749 §2.3.1, the
 * default of most libraries), PKCE where the document offers it (RFC 7636), nonce and state, the `iss` of
 * the redirect checked (RFC 9207, as the documents announce it), the ID token validated, and UserInfo
 * fetched (OIDC Core §5.3). And the fields OIDC Discovery 1.0 §3 requires, in every document.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import { startTestService, SECRETS, REDIRECT, type TestService } from '../helpers/service.js';
import { makeHint } from '../helpers/rp.js';
import { holderCompletesIssuance, holderCompletesVerification, newWallet } from '../helpers/flows.js';
import type { DevWallet } from '../../src/wallet/holder.js';

/** OIDC Discovery 1.0 §3: the metadata an OpenID Provider's document must carry. */
const REQUIRED = [
  'issuer',
  'authorization_endpoint',
  'token_endpoint',
  'jwks_uri',
  'response_types_supported',
  'subject_types_supported',
  'id_token_signing_alg_values_supported',
];

const services: Record<string, TestService> = {};
let wallet: DevWallet;

beforeAll(async () => {
  const [defaults, v2Issuer, noV1, oidcV1Par] = await Promise.all([
    startTestService(),
    startTestService({ versions: { v2Issuer: 'v2.0' } }),
    startTestService({ versions: { v1: false } }),
    startTestService({ versions: { v1ParDocument: 'oidc-discovery' } }),
  ]);
  Object.assign(services, { defaults, v2Issuer, noV1, oidcV1Par });
  wallet = await newWallet();
});
afterAll(async () => {
  await Promise.all(Object.values(services).map((s) => s.stop()));
});

interface DocCase {
  name: string;
  service: string;
  /** what the relying party gives openid-client: the issuer, or the document's URL where it is not at the issuer */
  discoverFrom: (base: string) => string;
  issuer: (base: string) => string;
  version: 1 | 2;
  /** the flow the document's endpoints serve: issuance by PAR, or (the Version 1 root document) verification without PAR */
  flow: 'issuance' | 'verification';
  pkce: boolean;
  /** the interface omits subject_types_supported from the Version 1 PAR document */
  lacks?: string[];
}

const CASES: DocCase[] = [
  {
    name: 'defaults, Version 2 document (its full URL: the issuer {base_url} finds Version 1)',
    service: 'defaults',
    discoverFrom: (b) => `${b}/v2.0/.well-known/openid-configuration`,
    issuer: (b) => b,
    version: 2,
    flow: 'issuance',
    pkce: true,
  },
  {
    name: 'defaults, Version 1 PAR document (from its issuer {base_url}/oidc)',
    service: 'defaults',
    discoverFrom: (b) => `${b}/oidc`,
    issuer: (b) => `${b}/oidc`,
    version: 1,
    flow: 'issuance',
    pkce: false,
    lacks: ['subject_types_supported'],
  },
  {
    name: 'defaults, Version 1 root document (its full URL, verification without PAR)',
    service: 'defaults',
    discoverFrom: (b) => `${b}/.well-known/openid-configuration`,
    issuer: (b) => `${b}/oidc`,
    version: 1,
    flow: 'verification',
    pkce: true,
  },
  {
    name: 'versions.v2Issuer: v2.0, Version 2 (from its issuer {base_url}/v2.0)',
    service: 'v2Issuer',
    discoverFrom: (b) => `${b}/v2.0`,
    issuer: (b) => `${b}/v2.0`,
    version: 2,
    flow: 'issuance',
    pkce: true,
  },
  {
    name: 'versions.v1: false, Version 2 (from its issuer {base_url}, the root document)',
    service: 'noV1',
    discoverFrom: (b) => b,
    issuer: (b) => b,
    version: 2,
    flow: 'issuance',
    pkce: true,
  },
  {
    name: 'versions.v1ParDocument: oidc-discovery, Version 1 PAR document (from its issuer)',
    service: 'oidcV1Par',
    discoverFrom: (b) => `${b}/oidc`,
    issuer: (b) => `${b}/oidc`,
    version: 1,
    flow: 'issuance',
    pkce: false,
  },
];

/** The relying party's part, as openid-client's documentation writes it, with HTTP Basic. */
async function relyingParty(c: DocCase, base: string) {
  const clientId = c.pkce ? 'issuer-pkce' : 'other';
  const secret = c.pkce ? SECRETS.pkceIssuer : SECRETS.other;
  const config = await oidc.discovery(
    new URL(c.discoverFrom(base)),
    clientId,
    undefined,
    oidc.ClientSecretBasic(secret),
    { execute: [oidc.allowInsecureRequests] },
  );
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const params: Record<string, string> = { redirect_uri: REDIRECT, state, nonce };
  if (c.pkce)
    Object.assign(params, {
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
  return { config, clientId, secret, verifier, state, nonce, params };
}

describe.each(CASES)('openid-client at its defaults: $name', (c) => {
  it('OIDC Discovery 3: the document carries every required field (and the additions libraries read)', async () => {
    const base = services[c.service].url;
    const { config } = await relyingParty(c, base);
    const doc = config.serverMetadata();
    expect(doc.issuer).toBe(c.issuer(base));
    for (const field of REQUIRED) expect(Object.hasOwn(doc, field), field).toBe(!(c.lacks ?? []).includes(field));
    expect(doc.userinfo_endpoint).toBe(`${base}${c.version === 2 ? '/v2.0/oidc' : '/oidc'}/userinfo`);
    expect(doc.token_endpoint_auth_methods_supported).toContain('client_secret_basic');
    expect(doc.authorization_response_iss_parameter_supported).toBe(true);
  });

  it('the whole flow: client_secret_basic, PKCE where offered, nonce, state, iss, the ID token, UserInfo', async () => {
    const base = services[c.service].url;
    const rp = await relyingParty(c, base);
    let callbackUrl: string;
    if (c.flow === 'issuance') {
      rp.params.scope = c.version === 2 ? 'openid issue.EmployeeBadge' : 'issue.EmployeeBadge';
      rp.params.id_token_hint = await makeHint({
        clientId: rp.clientId,
        secret: rp.secret,
        audience: c.issuer(base),
        claims: { FirstName: 'Ada', LastName: 'Lovelace' },
      });
      const url = await oidc.buildAuthorizationUrlWithPAR(rp.config, rp.params);
      ({ callbackUrl } = await holderCompletesIssuance(url.href, { redirectUri: REDIRECT, wallet }));
    } else {
      rp.params.scope = 'openid EmployeeBadge';
      const url = oidc.buildAuthorizationUrl(rp.config, rp.params);
      ({ callbackUrl } = await holderCompletesVerification(url.href, { redirectUri: REDIRECT, wallet }));
    }
    const tokens = await oidc.authorizationCodeGrant(rp.config, new URL(callbackUrl), {
      pkceCodeVerifier: c.pkce ? rp.verifier : undefined,
      expectedState: rp.state,
      expectedNonce: rp.nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ iss: c.issuer(base), aud: rp.clientId, nonce: rp.nonce, FirstName: 'Ada' });
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    const info = await oidc.fetchUserInfo(rp.config, tokens.access_token, claims.sub);
    expect(info).toMatchObject({ sub: claims.sub, FirstName: 'Ada', LastName: 'Lovelace' });
  });
});
