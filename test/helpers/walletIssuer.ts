/**
 * The wallet-facing issuer alone on a real Koa app (127.0.0.1, an ephemeral port, the test run's store),
 * and the raw wallet requests the issuance tests make against it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import type { CredentialType } from '../../src/config/schema.js';
import { createWalletIssuer, type WalletIssuer, type WalletIssuerOptions } from '../../src/issuance/walletIssuer.js';
import type { Store } from '../../src/store/types.js';
import { testStore } from './stores.js';
import { resolveOfferLink } from './rp.js';
import { PinHasher } from '../../src/rules/pinHash.js';

export const COOKIE_KEY = 'test-cookie-key-0123456789abcdef';

export const PRE_AUTH = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';

export const employeeBadge = {
  name: 'EmployeeBadge',
  displayName: 'Employee badge',
  validity: 'P365D',
  pinCodeLength: 4,
  attributes: {
    FirstName: { type: 'string', required: true, label: 'First name' },
    LastName: { type: 'string', required: true },
    Email: { type: 'email', required: false },
  },
} satisfies CredentialType;

export const attributes = { FirstName: 'Ada', LastName: 'Lovelace', Email: 'ada@example.com' };

export interface Running {
  baseUrl: string;
  issuer: WalletIssuer;
  store: Store;
  publicJwks: { keys: JWK[] };
  close(): Promise<void>;
}

/** A real Koa app with only the wallet issuer on 127.0.0.1, an ephemeral port, the test run's store. */
export async function startIssuer(overrides: Partial<WalletIssuerOptions> = {}): Promise<Running> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const kid = 'credential-key-1';
  const store = await testStore();
  const issuer = createWalletIssuer({
    baseUrl,
    path: 'wallet',
    store,
    credentialKeys: { keys: [{ ...(await exportJWK(privateKey)), kid, alg: 'ES256' }] },
    credentialTypes: [employeeBadge],
    offerLifetime: 120,
    pinAttempts: 3,
    cookieKeys: [COOKIE_KEY],
    ...overrides,
  });
  const app = new Koa();
  app.use(issuer.middleware);
  app.use((ctx) => {
    ctx.status = 404;
    ctx.body = { error: 'not_found' };
  });
  server.on('request', app.callback());
  return {
    baseUrl,
    issuer,
    store,
    publicJwks: { keys: [{ ...(await exportJWK(publicKey)), kid }] },
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await store.close();
    },
  };
}

let offers = 0;
export async function offer(
  running: Running,
  opts: {
    pin?: string;
    attributes?: Record<string, unknown>;
    credentialExpiresAt?: Date;
    credentialType?: string;
  } = {},
) {
  const stepId = `step-${++offers}`;
  const credentialExpiresAt = opts.credentialExpiresAt ?? new Date(Date.UTC(2030, 0, 1));
  const serialNumber = `SN-${offers}-${Math.random().toString(36).slice(2)}`;
  const { offerId, offerUri, expiresAt } = await running.issuer.createOffer({
    stepId,
    credentialType: opts.credentialType ?? 'EmployeeBadge',
    attributes: opts.attributes ?? attributes,
    serialNumber,
    credentialExpiresAt,
    ...(opts.pin ? { pin: new PinHasher(COOKIE_KEY).hash(opts.pin, stepId) } : {}),
  });
  const parsed = await resolveOfferLink(offerUri);
  return {
    stepId,
    serialNumber,
    offerId,
    offerUri,
    expiresAt,
    credentialExpiresAt,
    code: parsed.grants[PRE_AUTH]['pre-authorized_code'] as string,
    parsed,
  };
}

export async function tokenRequest(baseUrl: string, params: Record<string, string>) {
  const response = await fetch(`${baseUrl}/wallet/token`, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: PRE_AUTH, ...params }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, string> };
}

export async function nonce(baseUrl: string): Promise<string> {
  const response = await fetch(`${baseUrl}/wallet/challenge`, { method: 'POST' });
  return ((await response.json()) as { c_nonce: string }).c_nonce;
}

export async function proof(claims: { aud: string; nonce: string }) {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  return new SignJWT({ nonce: claims.nonce })
    .setProtectedHeader({ alg: 'ES256', typ: 'openid4vci-proof+jwt', jwk: await exportJWK(publicKey) })
    .setAudience(claims.aud)
    .setIssuedAt()
    .sign(privateKey);
}

export async function credentialRequest(
  baseUrl: string,
  accessToken: string,
  proofJwt: string,
  configurationId = 'EmployeeBadge',
) {
  const response = await fetch(`${baseUrl}/wallet/credential`, {
    method: 'POST',
    headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ credential_configuration_id: configurationId, proofs: { jwt: [proofJwt] } }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}
