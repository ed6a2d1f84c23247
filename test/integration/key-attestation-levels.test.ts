/**
 * Issue 49, keys the wallet proves (OpenID4VCI 1.0 Appendix D, F.3; HAIP 1.0 §4.5.1; ARF ISSU_21, ISSU_30): a
 * type's `key_attestations_required` with the operator's ISO/IEC 18045 levels, the `attestation` proof type
 * whose `attested_keys` are the batch's keys, and the status of key and wallet attestations checked against
 * the wallet provider's Token Status List with the bounded fetch. Attestations and status lists are made with
 * jose and @sd-jwt/jwt-status-list here, never with our code.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { StatusList } from '@sd-jwt/jwt-status-list';
import { calculateJwkThumbprint, decodeJwt, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CredentialType } from '../../src/config/schema.js';
import { AttestationKeys } from '../../src/issuance/attestationKeys.js';
import { OutboundFetch } from '../../src/http/outboundFetch.js';
import { StatusChecks } from '../../src/verification/statusCheck.js';
import {
  employeeBadge,
  nonce,
  offer,
  PRE_AUTH,
  startIssuer,
  tokenRequest,
  type Running,
} from '../helpers/walletIssuer.js';
import { keyPair, type TestKeyPair as KeyPair } from '../helpers/keys.js';

/** high key storage, at least moderate user authentication, batches of 3 */
const guarded: CredentialType = {
  name: 'GuardedBadge',
  validity: 'P365D',
  attributes: employeeBadge.attributes,
  keyAttestation: 'required',
  keyAttestationLevels: { keyStorage: 'iso_18045_high', userAuthentication: 'iso_18045_moderate' },
  batchSize: 3,
};

let running: Running;
let provider: KeyPair & { kid: string };
let lists: http.Server;
let listsUrl: string;
/** the wallet provider's status list: entry 1 revoked, entry 2 suspended, the rest valid */
let listToken: string;

beforeAll(async () => {
  provider = { ...(await keyPair()), kid: 'wp-1' };
  lists = http.createServer((req, res) => {
    if (req.url !== '/lists/1') return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/statuslist+jwt' }).end(listToken);
  });
  lists.listen(0, '127.0.0.1');
  await once(lists, 'listening');
  listsUrl = `http://127.0.0.1:${(lists.address() as AddressInfo).port}/lists/1`;
  const list = new StatusList(
    Array.from({ length: 16 }, (_, i) => (i === 1 ? 1 : i === 2 ? 2 : 0)),
    2,
  );
  listToken = await new SignJWT({ status_list: { bits: 2, lst: list.compressStatusList() }, ttl: 60 })
    .setProtectedHeader({ alg: 'ES256', typ: 'statuslist+jwt', kid: provider.kid })
    .setSubject(listsUrl)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(provider.privateKey);
  const attestationKeys = AttestationKeys.fromConfig(
    [{ name: 'provider', jwks: { keys: [{ ...provider.publicJwk, kid: provider.kid, alg: 'ES256' }] } }],
    '.',
  );
  running = await startIssuer({
    credentialTypes: [guarded, employeeBadge],
    attestationKeys,
    // the verifier's bounded fetch; this machine's addresses allowed as a development base URL allows them
    attestationStatusChecks: {
      checks: new StatusChecks(new OutboundFetch({ allowedPrivateTargets: ['127.0.0.0/8'] })),
      onUnavailable: 'refuse',
    },
  });
});
afterAll(async () => {
  await running?.close();
  lists?.close();
});

const endpoint = (path: string) => `${running.baseUrl}/wallet/${path}`;

/** A key attestation (Appendix D.1) signed by the wallet provider; `status` names an entry of its list. */
async function keyAttestation(
  attested: JWK[],
  o: { storage?: string; auth?: string; status?: number; nonce?: string } = {},
): Promise<string> {
  return new SignJWT({
    attested_keys: attested,
    key_storage: [o.storage ?? 'iso_18045_high'],
    user_authentication: [o.auth ?? 'iso_18045_moderate'],
    ...(o.nonce ? { nonce: o.nonce } : {}),
    ...(o.status !== undefined ? { status: { status_list: { idx: o.status, uri: listsUrl } } } : {}),
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'key-attestation+jwt', kid: provider.kid })
    .setIssuer('https://wallet-provider.example')
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(provider.privateKey);
}

async function jwtProof(holder: KeyPair, attestation: string, c: string): Promise<string> {
  return new SignJWT({ nonce: c })
    .setProtectedHeader({
      alg: 'ES256',
      typ: 'openid4vci-proof+jwt',
      jwk: holder.publicJwk,
      key_attestation: attestation,
    })
    .setAudience(`${running.baseUrl}/wallet`)
    .setIssuedAt()
    .sign(holder.privateKey);
}

async function request(accessToken: string, proofs: Record<string, string[]>, type = 'GuardedBadge') {
  const response = await fetch(endpoint('credential'), {
    method: 'POST',
    headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ credential_configuration_id: type, proofs }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function accessTokenFor(type = 'GuardedBadge') {
  const o = await offer(running, { credentialType: type });
  const token = await tokenRequest(running.baseUrl, { 'pre-authorized_code': o.code });
  expect(token.status).toBe(200);
  return { ...o, accessToken: token.body.access_token };
}

describe('key_attestations_required with levels (Appendix D.2, HAIP 1.0 §4.5.1)', () => {
  it('publishes the accepted levels (at or above the least) for jwt proofs and the attestation proof type', async () => {
    const metadata = (await (await fetch(`${running.baseUrl}/.well-known/openid-credential-issuer/wallet`)).json()) as {
      credential_configurations_supported: Record<
        string,
        { proof_types_supported: Record<string, Record<string, unknown>> }
      >;
    };
    const required = { key_storage: ['iso_18045_high'], user_authentication: ['iso_18045_high', 'iso_18045_moderate'] };
    const proofTypes = metadata.credential_configurations_supported.GuardedBadge.proof_types_supported;
    expect(proofTypes.jwt.key_attestations_required).toEqual(required);
    expect(proofTypes.attestation).toEqual({
      proof_signing_alg_values_supported: ['ES256', 'EdDSA'],
      key_attestations_required: required,
    });
    expect(metadata.credential_configurations_supported.EmployeeBadge.proof_types_supported).not.toHaveProperty(
      'attestation',
    );
  });

  it('a key attested below a level is refused (invalid_proof); at the levels it is issued', async () => {
    const { accessToken } = await accessTokenFor();
    const holder = await keyPair();
    const c = await nonce(running.baseUrl);
    const weak = await request(accessToken, {
      jwt: [await jwtProof(holder, await keyAttestation([holder.publicJwk], { storage: 'iso_18045_moderate' }), c)],
    });
    expect(weak).toMatchObject({ status: 400, body: { error: 'invalid_proof' } });
    expect(String(weak.body.error_description)).toMatch(/key_storage/);
    const weakAuth = await request(accessToken, {
      jwt: [await jwtProof(holder, await keyAttestation([holder.publicJwk], { auth: 'iso_18045_basic' }), c)],
    });
    expect(weakAuth).toMatchObject({ status: 400, body: { error: 'invalid_proof' } });
    const good = await request(accessToken, {
      jwt: [await jwtProof(holder, await keyAttestation([holder.publicJwk]), c)],
    });
    expect(good.status, JSON.stringify(good.body)).toBe(200);
  });
});

describe('the attestation proof type (Appendix F.3): its attested_keys are the batch', () => {
  it('three attested keys, three credentials, each bound to one of them', async () => {
    const { accessToken } = await accessTokenFor();
    const keys = await Promise.all([keyPair(), keyPair(), keyPair()]);
    const c = await nonce(running.baseUrl);
    const issued = await request(accessToken, {
      attestation: [
        await keyAttestation(
          keys.map((k) => k.publicJwk),
          { nonce: c },
        ),
      ],
    });
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
    const credentials = (issued.body.credentials as { credential: string }[]).map((x) => x.credential);
    const bound = await Promise.all(
      credentials.map((x) => calculateJwkThumbprint((decodeJwt(x.split('~')[0]) as { cnf: { jwk: JWK } }).cnf.jwk)),
    );
    expect(bound).toEqual(await Promise.all(keys.map((k) => calculateJwkThumbprint(k.publicJwk))));
  });

  it('more attested keys than the batch size, or an attestation without the c_nonce, is refused whole', async () => {
    const { accessToken, serialNumber } = await accessTokenFor();
    const keys = await Promise.all(Array.from({ length: 4 }, () => keyPair()));
    const c = await nonce(running.baseUrl);
    const tooMany = await request(accessToken, {
      attestation: [
        await keyAttestation(
          keys.map((k) => k.publicJwk),
          { nonce: c },
        ),
      ],
    });
    expect(tooMany).toMatchObject({ status: 400, body: { error: 'invalid_proof' } });
    const noNonce = await request(accessToken, { attestation: [await keyAttestation([keys[0].publicJwk])] });
    expect(noNonce).toMatchObject({ status: 400, body: { error: 'invalid_proof' } });
    expect(await running.issuer.statuses.status(serialNumber)).toBeUndefined();
  });
});

describe("an attestation's status (ARF ISSU_21, ISSU_30)", () => {
  it('a key attestation whose entry is revoked or suspended is refused; a valid entry is issued', async () => {
    const { accessToken, serialNumber } = await accessTokenFor();
    const holder = await keyPair();
    const c = await nonce(running.baseUrl);
    for (const [idx, word] of [
      [1, 'revoked'],
      [2, 'suspended'],
    ] as const) {
      const refused = await request(accessToken, {
        jwt: [await jwtProof(holder, await keyAttestation([holder.publicJwk], { status: idx }), c)],
      });
      expect(refused).toMatchObject({ status: 400, body: { error: 'invalid_proof' } });
      expect(String(refused.body.error_description)).toContain(word);
    }
    expect(await running.issuer.statuses.status(serialNumber)).toBeUndefined();
    const valid = await request(accessToken, {
      jwt: [await jwtProof(holder, await keyAttestation([holder.publicJwk], { status: 3 }), c)],
    });
    expect(valid.status, JSON.stringify(valid.body)).toBe(200);
  });

  it('a status list that cannot be fetched refuses the attestation (statusList.onUnavailable: refuse)', async () => {
    const { accessToken } = await accessTokenFor();
    const holder = await keyPair();
    const c = await nonce(running.baseUrl);
    const elsewhere = await new SignJWT({
      attested_keys: [holder.publicJwk],
      key_storage: ['iso_18045_high'],
      user_authentication: ['iso_18045_high'],
      status: { status_list: { idx: 0, uri: `${listsUrl}-missing` } },
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'key-attestation+jwt', kid: provider.kid })
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(provider.privateKey);
    const refused = await request(accessToken, { jwt: [await jwtProof(holder, elsewhere, c)] });
    expect(refused).toMatchObject({ status: 400, body: { error: 'invalid_proof' } });
    expect(String(refused.body.error_description)).toMatch(/status cannot be checked/);
  });

  it('a wallet attestation whose entry is revoked gets no token (invalid_client)', async () => {
    const o = await offer(running);
    const instance = await keyPair();
    const attestation = async (idx: number) =>
      new SignJWT({ cnf: { jwk: instance.publicJwk }, status: { status_list: { idx, uri: listsUrl } } })
        .setProtectedHeader({ alg: 'ES256', typ: 'oauth-client-attestation+jwt', kid: provider.kid })
        .setIssuer('https://wallet-provider.example')
        .setSubject('eudi-wallet')
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(provider.privateKey);
    const challenge = async () =>
      ((await (await fetch(endpoint('challenge'), { method: 'POST' })).json()) as { attestation_challenge: string })
        .attestation_challenge;
    const token = async (idx: number) => {
      const pop = await new SignJWT({ jti: randomUUID(), challenge: await challenge() })
        .setProtectedHeader({ alg: 'ES256', typ: 'oauth-client-attestation-pop+jwt' })
        .setAudience(`${running.baseUrl}/wallet`)
        .setIssuedAt()
        .sign(instance.privateKey);
      const response = await fetch(endpoint('token'), {
        method: 'POST',
        headers: { 'oauth-client-attestation': await attestation(idx), 'oauth-client-attestation-pop': pop },
        body: new URLSearchParams({ grant_type: PRE_AUTH, 'pre-authorized_code': o.code }),
      });
      return { status: response.status, body: (await response.json()) as Record<string, string> };
    };
    const revoked = await token(1);
    expect(revoked.status).toBe(401);
    expect(revoked.body).toMatchObject({ error: 'invalid_client' });
    const valid = await token(0);
    expect(valid.status, JSON.stringify(valid.body)).toBe(200);
  });
});
