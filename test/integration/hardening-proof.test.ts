import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CredentialType } from '../../src/config/schema.js';
import { createWalletIssuer, type WalletIssuer } from '../../src/issuance/walletIssuer.js';
import { C_NONCE_LIFETIME, PROOF_CLOCK_TOLERANCE } from '../../src/issuance/issueCredential.js';
import type { Store } from '../../src/store/types.js';
import { testStore } from '../helpers/stores.js';
import { resolveOfferLink } from '../helpers/rp.js';

/**
 * Hardening, point 9: the credential request's proof of possession must be recent. oidc-provider checks
 * its signature, typ, aud and c_nonce, but not how old its `iat` is; the issuer bounds it to the c_nonce's
 * lifetime plus the clock tolerance, and to the tolerance into the future.
 */
const PRE_AUTH = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';

const employeeBadge = {
  name: 'EmployeeBadge',
  validity: 'P365D',
  attributes: { FirstName: { type: 'string', required: true }, LastName: { type: 'string', required: true } },
} satisfies CredentialType;

let server: http.Server;
let baseUrl: string;
let issuer: WalletIssuer;
let store: Store;

beforeAll(async () => {
  server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  store = await testStore();
  issuer = createWalletIssuer({
    baseUrl,
    path: 'wallet',
    store,
    credentialKeys: { keys: [{ ...(await exportJWK(privateKey)), kid: 'credential-key-1', alg: 'ES256' }] },
    credentialTypes: [employeeBadge],
    offerLifetime: 120,
    pinAttempts: 3,
    cookieKeys: ['test-cookie-key-0123456789abcdef'],
  });
  const app = new Koa();
  app.use(issuer.middleware);
  server.on('request', app.callback());
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await store.close();
});

let counter = 0;
/** An offer without a PIN, redeemed: the wallet's access token for the credential request. */
async function accessToken(): Promise<string> {
  const { offerUri } = await issuer.createOffer({
    stepId: `proof-step-${++counter}`,
    credentialType: 'EmployeeBadge',
    attributes: { FirstName: 'Ada', LastName: 'Lovelace' },
    serialNumber: `SN-proof-${counter}`,
    credentialExpiresAt: new Date(Date.UTC(2030, 0, 1)),
  });
  const code = (await resolveOfferLink(offerUri)).grants[PRE_AUTH]['pre-authorized_code'] as string;
  const res = await fetch(`${baseUrl}/wallet/token`, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: PRE_AUTH, 'pre-authorized_code': code }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

async function cNonce(): Promise<string> {
  const res = await fetch(`${baseUrl}/wallet/challenge`, { method: 'POST' });
  return ((await res.json()) as { c_nonce: string }).c_nonce;
}

/** A proof for a fresh c_nonce, signed by a new holder key, with the given `iat` (epoch seconds). */
async function proof(iat: number): Promise<string> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  return new SignJWT({ nonce: await cNonce() })
    .setProtectedHeader({ alg: 'ES256', typ: 'openid4vci-proof+jwt', jwk: await exportJWK(publicKey) })
    .setAudience(`${baseUrl}/wallet`)
    .setIssuedAt(iat)
    .sign(privateKey);
}

async function credentialRequest(token: string, proofJwt: string) {
  const res = await fetch(`${baseUrl}/wallet/credential`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ credential_configuration_id: 'EmployeeBadge', proofs: { jwt: [proofJwt] } }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const now = () => Math.floor(Date.now() / 1000);

describe("the proof of possession's iat", () => {
  it('an hour old, or an hour in the future -> 400 invalid_proof; the offer stays; a fresh proof is issued', async () => {
    const token = await accessToken();
    for (const [what, iat] of [
      ['an hour old', now() - 3600],
      ['an hour in the future', now() + 3600],
      ['just older than the c_nonce lifetime plus the tolerance', now() - C_NONCE_LIFETIME - PROOF_CLOCK_TOLERANCE - 5],
      ['just further in the future than the tolerance', now() + PROOF_CLOCK_TOLERANCE + 5],
    ] as const) {
      const refused = await credentialRequest(token, await proof(iat));
      expect(refused, what).toMatchObject({ status: 400, body: { error: 'invalid_proof' } });
      expect(String(refused.body.error_description), what).toMatch(/iat/);
    }
    const issued = await credentialRequest(token, await proof(now()));
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
    expect(issued.body.credentials).toHaveLength(1);
  });

  it('within the bounds (a clock a little ahead, a proof signed a while after its c_nonce) -> issued', async () => {
    const ahead = await credentialRequest(await accessToken(), await proof(now() + PROOF_CLOCK_TOLERANCE - 5));
    expect(ahead.status, JSON.stringify(ahead.body)).toBe(200);
    const older = await credentialRequest(await accessToken(), await proof(now() - C_NONCE_LIFETIME + 30));
    expect(older.status, JSON.stringify(older.body)).toBe(200);
  });
});
