/**
 * The wallet-facing issuer as production wallets call it (OpenID4VC HAIP 1.0): DPoP-bound access tokens
 * with server nonces (RFC 9449), key attestations in proofs (OpenID4VCI 1.0 Appendix D), and metadata an
 * independent wallet library (@openid4vc/openid4vci) reads. DPoP proofs and attestations of the negative
 * cases are made with jose here, not with our code.
 */
import { createHash, createPrivateKey, randomUUID, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setGlobalConfig } from '@openid4vc/openid4vci';
import { decodeJwt, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CredentialType } from '../../src/config/schema.js';
import { AttestationKeys } from '../../src/issuance/attestationKeys.js';
import { RACE_WINDOW_SECONDS } from '../../src/issuance/offers.js';
import { RACE_LOST } from '../../src/issuance/tokenEdge.js';
import { generateVerifierCertificates, readPemCertificates } from '../../src/keys/x509.js';
import {
  attributes,
  employeeBadge,
  nonce,
  offer,
  PRE_AUTH,
  startIssuer,
  type Running,
} from '../helpers/walletIssuer.js';
import { verifySdJwtVcIndependently } from '../helpers/sdjwt.js';
import { independentWallet } from '../helpers/openid4vci.js';
import { keyPair, type TestKeyPair as KeyPair } from '../helpers/keys.js';

/** a type whose proofs must carry a key attestation */
const secureBadge = { ...employeeBadge, name: 'SecureBadge', keyAttestation: 'required' } satisfies CredentialType;

let running: Running;
let dir: string;
/** a wallet provider known by its JWKS */
let walletProvider: KeyPair & { kid: string };
/** a wallet provider known by its root: it attests with an x5c chain */
let x5cProvider: { key: KeyObject; x5c: string[] };

beforeAll(async () => {
  setGlobalConfig({ allowInsecureUrls: true }); // the test issuer runs on http://127.0.0.1
  dir = mkdtempSync(join(tmpdir(), 'vc-attest-'));
  walletProvider = { ...(await keyPair()), kid: 'wp-1' };
  const certs = await generateVerifierCertificates('wallet-provider.example');
  writeFileSync(join(dir, 'provider-root.pem'), certs.caCertificate);
  x5cProvider = {
    key: createPrivateKey(certs.key),
    x5c: readPemCertificates(certs.chain, 'chain').map((der) => Buffer.from(der).toString('base64')),
  };
  running = await startIssuer({
    credentialTypes: [employeeBadge, secureBadge],
    // as the config names them (walletAttestation.trustedProviders)
    attestationKeys: AttestationKeys.fromConfig(
      [
        {
          name: 'jwks provider',
          jwks: { keys: [{ ...walletProvider.publicJwk, kid: walletProvider.kid, alg: 'ES256' }] },
        },
        { name: 'x5c provider', certificates: 'provider-root.pem' },
      ],
      dir,
    ),
  });
});
afterAll(async () => {
  setGlobalConfig({ allowInsecureUrls: false });
  await running?.close();
  rmSync(dir, { recursive: true, force: true });
});

const endpoint = (path: string) => `${running.baseUrl}/wallet/${path}`;

/** An RFC 9449 DPoP proof, made with jose. */
async function dpopProof(
  key: KeyPair,
  o: { htm: string; htu: string; nonce?: string; accessToken?: string; jti?: string },
): Promise<string> {
  return new SignJWT({
    htm: o.htm,
    htu: o.htu,
    jti: o.jti ?? randomUUID(),
    ...(o.nonce ? { nonce: o.nonce } : {}),
    ...(o.accessToken ? { ath: createHash('sha256').update(o.accessToken).digest('base64url') } : {}),
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.publicJwk })
    .setIssuedAt()
    .sign(key.privateKey);
}

/** Token request with DPoP: the first answer asks for a nonce (use_dpop_nonce), the second carries it. */
async function dpopToken(
  key: KeyPair,
  code: string,
): Promise<{ accessToken: string; tokenType: string; nonce: string }> {
  const post = (proof: string) =>
    fetch(endpoint('token'), {
      method: 'POST',
      headers: { dpop: proof },
      body: new URLSearchParams({ grant_type: PRE_AUTH, 'pre-authorized_code': code }),
    });
  const first = await post(await dpopProof(key, { htm: 'POST', htu: endpoint('token') }));
  expect(first.status).toBe(400);
  expect(await first.json()).toMatchObject({ error: 'use_dpop_nonce' });
  const serverNonce = first.headers.get('dpop-nonce')!;
  expect(serverNonce).toBeTruthy();
  const second = await post(await dpopProof(key, { htm: 'POST', htu: endpoint('token'), nonce: serverNonce }));
  const body = (await second.json()) as Record<string, string>;
  expect(second.status, JSON.stringify(body)).toBe(200);
  return {
    accessToken: body.access_token,
    tokenType: body.token_type,
    nonce: second.headers.get('dpop-nonce') ?? serverNonce,
  };
}

async function jwtProof(holder: KeyPair, header: Record<string, unknown> = {}): Promise<string> {
  return new SignJWT({ nonce: await nonce(running.baseUrl) })
    .setProtectedHeader({ alg: 'ES256', typ: 'openid4vci-proof+jwt', jwk: holder.publicJwk, ...header })
    .setAudience(`${running.baseUrl}/wallet`)
    .setIssuedAt()
    .sign(holder.privateKey);
}

async function credentialRequest(o: {
  accessToken: string;
  proof: string;
  dpop?: string;
  scheme?: string;
  type?: string;
}) {
  const response = await fetch(endpoint('credential'), {
    method: 'POST',
    headers: {
      authorization: `${o.scheme ?? 'DPoP'} ${o.accessToken}`,
      'content-type': 'application/json',
      ...(o.dpop ? { dpop: o.dpop } : {}),
    },
    body: JSON.stringify({ credential_configuration_id: o.type ?? 'EmployeeBadge', proofs: { jwt: [o.proof] } }),
  });
  return {
    status: response.status,
    body: (await response.json()) as Record<string, unknown>,
    nonce: response.headers.get('dpop-nonce'),
  };
}

async function bearerToken(code: string): Promise<string> {
  const response = await fetch(endpoint('token'), {
    method: 'POST',
    body: new URLSearchParams({ grant_type: PRE_AUTH, 'pre-authorized_code': code }),
  });
  const body = (await response.json()) as Record<string, string>;
  expect(response.status, JSON.stringify(body)).toBe(200);
  expect(body.token_type).toBe('Bearer');
  return body.access_token;
}

/** A key attestation (OpenID4VCI 1.0 Appendix D.1) of `attested`, signed by a wallet provider's key. */
async function keyAttestation(
  attested: JWK[],
  signer: { key: CryptoKey | KeyObject; header: Record<string, unknown> },
  ttl = '1h',
): Promise<string> {
  return new SignJWT({
    attested_keys: attested,
    key_storage: ['iso_18045_high'],
    user_authentication: ['iso_18045_high'],
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'key-attestation+jwt', ...signer.header })
    .setIssuer('https://wallet-provider.example')
    .setIssuedAt()
    .setExpirationTime(ttl)
    .sign(signer.key);
}

describe('metadata, as @openid4vc/openid4vci reads it', () => {
  it('advertises DPoP algorithms and which types require key attestations, and parses', async () => {
    const client = independentWallet([await keyPair()]);
    const metadata = await client.resolveIssuerMetadata(`${running.baseUrl}/wallet`);
    const configurations = metadata.credentialIssuer.credential_configurations_supported as unknown as Record<
      string,
      { proof_types_supported: { jwt: Record<string, unknown> } }
    >;
    expect(configurations.SecureBadge.proof_types_supported.jwt.key_attestations_required).toEqual({});
    expect(configurations.EmployeeBadge.proof_types_supported.jwt).not.toHaveProperty('key_attestations_required');
    expect(metadata.authorizationServers[0].dpop_signing_alg_values_supported).toEqual(['ES256', 'EdDSA']);
  });
});

describe('DPoP (RFC 9449) at the token and credential endpoints', () => {
  it('the independent wallet, with DPoP, completes issuance; its access token is bound to its key', async () => {
    const o = await offer(running, { pin: '2468' });
    const holder = await keyPair();
    const dpopKey = await keyPair();
    const client = independentWallet([holder, dpopKey]);
    const credentialOffer = await client.resolveCredentialOffer(o.offerUri);
    const issuerMetadata = await client.resolveIssuerMetadata(credentialOffer.credential_issuer);
    const dpopSigner = { method: 'jwk' as const, alg: 'ES256', publicJwk: dpopKey.publicJwk as never };
    const token = await client.retrievePreAuthorizedCodeAccessTokenFromOffer({
      credentialOffer,
      issuerMetadata,
      txCode: '2468',
      dpop: { signer: dpopSigner },
    });
    expect(token.accessTokenResponse.token_type).toBe('DPoP');
    const { c_nonce } = await client.requestNonce({ issuerMetadata });
    const { jwt } = await client.createCredentialRequestJwtProof({
      issuerMetadata,
      credentialConfigurationId: 'EmployeeBadge',
      nonce: c_nonce,
      signer: { method: 'jwk', alg: 'ES256', publicJwk: holder.publicJwk as never },
    });
    const { credentialResponse } = await client.retrieveCredentials({
      issuerMetadata,
      accessToken: token.accessTokenResponse.access_token,
      credentialConfigurationId: 'EmployeeBadge',
      proofs: { jwt: [jwt] },
      dpop: { signer: dpopSigner, nonce: token.dpop?.nonce },
    });
    const credential = (credentialResponse.credentials?.[0] as { credential: string }).credential;
    expect((await verifySdJwtVcIndependently(credential, running.publicJwks)).claims).toMatchObject(attributes);
  });

  it('refuses the bound token as a bearer token, with a proof of another key, and a replayed proof', async () => {
    const o = await offer(running);
    const key = await keyPair();
    const { accessToken, tokenType, nonce: serverNonce } = await dpopToken(key, o.code);
    expect(tokenType).toBe('DPoP');
    const credentialUrl = endpoint('credential');
    const holder = await keyPair();

    const asBearer = await credentialRequest({ accessToken, proof: await jwtProof(holder), scheme: 'Bearer' });
    expect(asBearer.status).toBe(401);
    expect(asBearer.body).toMatchObject({ error: 'invalid_token' });

    const other = await keyPair();
    const wrongKey = await credentialRequest({
      accessToken,
      proof: await jwtProof(holder),
      dpop: await dpopProof(other, { htm: 'POST', htu: credentialUrl, nonce: serverNonce, accessToken }),
    });
    expect(wrongKey.status).toBe(401);
    expect(wrongKey.body).toMatchObject({ error: 'invalid_token' });

    const proof = await dpopProof(key, { htm: 'POST', htu: credentialUrl, nonce: serverNonce, accessToken });
    const first = await credentialRequest({ accessToken, proof: await jwtProof(holder), dpop: proof });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const replayed = await credentialRequest({ accessToken, proof: await jwtProof(holder), dpop: proof });
    // the same request as the first but for its used proof (oidc-provider does not say why: invalid_token)
    expect(replayed).toMatchObject({ status: 401, body: { error: 'invalid_token' } });
  });

  it('a DPoP proof for another endpoint, or without the server nonce, is refused at the token endpoint', async () => {
    const o = await offer(running);
    const key = await keyPair();
    const elsewhere = await fetch(endpoint('token'), {
      method: 'POST',
      headers: { dpop: await dpopProof(key, { htm: 'POST', htu: endpoint('credential') }) },
      body: new URLSearchParams({ grant_type: PRE_AUTH, 'pre-authorized_code': o.code }),
    });
    expect(elsewhere.status).toBe(400);
    expect(await elsewhere.json()).toMatchObject({ error: 'invalid_dpop_proof' });
    // the offer is still redeemable
    expect((await dpopToken(key, o.code)).tokenType).toBe('DPoP');
  });
});

describe('key attestations (OpenID4VCI 1.0 Appendix D)', () => {
  const byJwksProvider = () => ({ key: walletProvider.privateKey, header: { kid: walletProvider.kid } });

  it('a proof with a trusted key attestation is accepted, for a type that does not require one too', async () => {
    const holder = await keyPair();
    for (const type of ['EmployeeBadge', 'SecureBadge']) {
      const o = await offer(running, { credentialType: type });
      const attestation = await keyAttestation([holder.publicJwk], byJwksProvider());
      const issued = await credentialRequest({
        accessToken: await bearerToken(o.code),
        scheme: 'Bearer',
        type,
        proof: await jwtProof(holder, { key_attestation: attestation }),
      });
      expect(issued.status, JSON.stringify(issued.body)).toBe(200);
    }
  });

  it('a key attestation by a provider known by its root (x5c) is accepted', async () => {
    const holder = await keyPair();
    const o = await offer(running, { credentialType: 'SecureBadge' });
    const attestation = await keyAttestation([holder.publicJwk], {
      key: x5cProvider.key,
      header: { x5c: x5cProvider.x5c },
    });
    const issued = await credentialRequest({
      accessToken: await bearerToken(o.code),
      scheme: 'Bearer',
      type: 'SecureBadge',
      proof: await jwtProof(holder, { key_attestation: attestation }),
    });
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
    const credential = (issued.body.credentials as { credential: string }[])[0].credential;
    expect(decodeJwt(credential.split('~')[0]).cnf).toEqual({
      jwk: expect.objectContaining({ x: holder.publicJwk.x }),
    });
  });

  it('refuses a proof without one when the type requires it, and one that is untrusted, expired or attests another key; the offer stays redeemable', async () => {
    const holder = await keyPair();
    const o = await offer(running, { credentialType: 'SecureBadge' });
    const accessToken = await bearerToken(o.code);
    const attempt = async (proof: string) =>
      credentialRequest({ accessToken, scheme: 'Bearer', type: 'SecureBadge', proof });

    const without = await attempt(await jwtProof(holder));
    expect(without).toMatchObject({ status: 400, body: { error: 'invalid_proof' } });
    expect(String(without.body.error_description)).toMatch(/key_attestation/);

    const stranger = await keyPair();
    const untrusted = await attempt(
      await jwtProof(holder, {
        key_attestation: await keyAttestation([holder.publicJwk], {
          key: stranger.privateKey,
          header: { kid: walletProvider.kid },
        }),
      }),
    );
    expect(untrusted).toMatchObject({ status: 400, body: { error: 'invalid_proof' } });

    const expired = await attempt(
      await jwtProof(holder, { key_attestation: await keyAttestation([holder.publicJwk], byJwksProvider(), '-1m') }),
    );
    expect(expired).toMatchObject({ status: 400, body: { error: 'invalid_proof' } });

    const otherKey = await keyPair();
    const notAttested = await attempt(
      await jwtProof(holder, { key_attestation: await keyAttestation([otherKey.publicJwk], byJwksProvider()) }),
    );
    expect(notAttested).toMatchObject({ status: 400, body: { error: 'invalid_proof' } });
    expect(String(notAttested.body.error_description)).toMatch(/attested keys/);

    const finally_ = await attempt(
      await jwtProof(holder, { key_attestation: await keyAttestation([holder.publicJwk], byJwksProvider()) }),
    );
    expect(finally_.status, JSON.stringify(finally_.body)).toBe(200);
  });
});

/** A wallet attestation (OAuth 2.0 Attestation-Based Client Authentication §5.1) of `instance`, and its PoP. */
async function walletAttestation(o: {
  sub: string;
  instance: KeyPair;
  signer?: { key: CryptoKey | KeyObject; header: Record<string, unknown> };
  ttl?: string;
}): Promise<string> {
  const signer = o.signer ?? { key: walletProvider.privateKey, header: { kid: walletProvider.kid } };
  return new SignJWT({ cnf: { jwk: o.instance.publicJwk } })
    .setProtectedHeader({ alg: 'ES256', typ: 'oauth-client-attestation+jwt', ...signer.header })
    .setIssuer('https://wallet-provider.example')
    .setSubject(o.sub)
    .setIssuedAt()
    .setExpirationTime(o.ttl ?? '1h')
    .sign(signer.key);
}

async function attestationPop(instance: KeyPair, base: Running, challenge?: string): Promise<string> {
  return new SignJWT({ jti: randomUUID(), ...(challenge ? { challenge } : {}) })
    .setProtectedHeader({ alg: 'ES256', typ: 'oauth-client-attestation-pop+jwt' })
    .setAudience(`${base.baseUrl}/wallet`)
    .setIssuedAt()
    .sign(instance.privateKey);
}

async function challenge(base: Running): Promise<string> {
  const response = await fetch(`${base.baseUrl}/wallet/challenge`, { method: 'POST' });
  return ((await response.json()) as { attestation_challenge: string }).attestation_challenge;
}

async function attestedToken(
  base: Running,
  code: string,
  headers: Record<string, string>,
  extra: Record<string, string> = {},
) {
  const response = await fetch(`${base.baseUrl}/wallet/token`, {
    method: 'POST',
    headers,
    body: new URLSearchParams({ grant_type: PRE_AUTH, 'pre-authorized_code': code, ...extra }),
  });
  return {
    status: response.status,
    body: (await response.json()) as Record<string, string>,
    challenge: response.headers.get('oauth-client-attestation-challenge'),
  };
}

describe('wallet attestations (OAuth 2.0 Attestation-Based Client Authentication) at the token endpoint', () => {
  const attested = async (base: Running, code: string, o: Parameters<typeof walletAttestation>[0]) =>
    attestedToken(base, code, {
      'oauth-client-attestation': await walletAttestation(o),
      'oauth-client-attestation-pop': await attestationPop(o.instance, base, await challenge(base)),
    });

  it('a wallet attested by a trusted provider redeems the offer as the client its attestation names, and gets its credential', async () => {
    const o = await offer(running);
    const instance = await keyPair();
    const token = await attested(running, o.code, { sub: 'eudi-wallet', instance });
    expect(token.status, JSON.stringify(token.body)).toBe(200);
    expect(await running.store.get(`wallet:{${o.offerId}}:code`)).toMatchObject({ clientId: 'eudi-wallet' });
    const holder = await keyPair();
    const issued = await credentialRequest({
      accessToken: token.body.access_token,
      scheme: 'Bearer',
      proof: await jwtProof(holder),
    });
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
  });

  it('a PoP without the server challenge is answered with one (use_attestation_challenge), and accepted with it', async () => {
    const o = await offer(running);
    const instance = await keyPair();
    const attestation = await walletAttestation({ sub: 'eudi-wallet', instance });
    const first = await attestedToken(running, o.code, {
      'oauth-client-attestation': attestation,
      'oauth-client-attestation-pop': await attestationPop(instance, running),
    });
    expect(first).toMatchObject({ status: 400, body: { error: 'use_attestation_challenge' } });
    expect(first.challenge).toBeTruthy();
    const second = await attestedToken(running, o.code, {
      'oauth-client-attestation': attestation,
      'oauth-client-attestation-pop': await attestationPop(instance, running, first.challenge!),
    });
    expect(second.status, JSON.stringify(second.body)).toBe(200);
  });

  it('refuses an expired attestation, one from an untrusted provider, and a PoP by another key (invalid_client)', async () => {
    const o = await offer(running);
    const instance = await keyPair();
    const expired = await attested(running, o.code, { sub: 'eudi-wallet', instance, ttl: '-1m' });
    expect(expired).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
    const stranger = await keyPair();
    const untrusted = await attested(running, o.code, {
      sub: 'eudi-wallet',
      instance,
      signer: { key: stranger.privateKey, header: { kid: walletProvider.kid } },
    });
    expect(untrusted).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
    const thief = await keyPair();
    const stolen = await attestedToken(running, o.code, {
      'oauth-client-attestation': await walletAttestation({ sub: 'eudi-wallet', instance }),
      'oauth-client-attestation-pop': await attestationPop(thief, running, await challenge(running)),
    });
    expect(stolen).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
    // none of them used the offer up
    expect((await attested(running, o.code, { sub: 'eudi-wallet', instance })).status).toBe(200);
  });

  it('an offer redeemed by one client cannot be redeemed by another (within the race window a concurrent request, issue 31 §6)', async () => {
    const o = await offer(running);
    expect((await attested(running, o.code, { sub: 'eudi-wallet', instance: await keyPair() })).status).toBe(200);
    const racing = await attestedToken(running, o.code, {});
    expect(racing).toMatchObject({ status: 400, body: { error: 'invalid_grant', error_description: RACE_LOST } });
    await new Promise((resolve) => setTimeout(resolve, (RACE_WINDOW_SECONDS + 1) * 1000));
    const anonymous = await attestedToken(running, o.code, {});
    expect(anonymous).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(anonymous.body.error_description).toMatch(/another client/);
  }, 20_000);

  it('without one, a wallet gets no token where walletAttestation.required is set; with one it does', async () => {
    const strict = await startIssuer({
      credentialTypes: [employeeBadge],
      attestationRequired: true,
      attestationKeys: AttestationKeys.fromConfig(
        [
          {
            name: 'jwks provider',
            jwks: { keys: [{ ...walletProvider.publicJwk, kid: walletProvider.kid, alg: 'ES256' }] },
          },
        ],
        dir,
      ),
    });
    try {
      const o = await offer(strict);
      const missing = await attestedToken(strict, o.code, {});
      expect(missing).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
      expect(missing.body.error_description).toMatch(/OAuth-Client-Attestation is required/);
      const asWallet = await attestedToken(strict, o.code, {}, { client_id: 'wallet' });
      expect(asWallet.status).toBe(401);
      expect((await attested(strict, o.code, { sub: 'eudi-wallet', instance: await keyPair() })).status).toBe(200);
      const metadata = (await (
        await fetch(`${strict.baseUrl}/.well-known/oauth-authorization-server/wallet`)
      ).json()) as Record<string, unknown>;
      expect(metadata.token_endpoint_auth_methods_supported).toEqual(
        expect.arrayContaining(['attest_jwt_client_auth']),
      );
      expect(metadata.challenge_endpoint).toBe(`${strict.baseUrl}/wallet/challenge`);
    } finally {
      await strict.close();
    }
  });
});

describe('an offer is tied to a client only by a redemption that succeeds', () => {
  it('a forged attestation naming another client gets no token and leaves the offer to the wallet that holds it', async () => {
    const o = await offer(running);
    const stranger = await keyPair();
    const forged = await attestedToken(running, o.code, {
      'oauth-client-attestation': await walletAttestation({
        sub: 'intruder',
        instance: stranger,
        signer: { key: stranger.privateKey, header: { kid: walletProvider.kid } },
      }),
      'oauth-client-attestation-pop': await attestationPop(stranger, running, await challenge(running)),
    });
    expect(forged).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
    expect(await running.store.get(`wallet:{${o.offerId}}:code`)).toBeUndefined();
    const anonymous = await attestedToken(running, o.code, {});
    expect(anonymous.status, JSON.stringify(anonymous.body)).toBe(200);
  });
});
