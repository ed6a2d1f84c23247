import { setGlobalConfig } from '@openid4vc/openid4vci';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import { independentWallet } from '../helpers/openid4vci.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../src/store/redis.js';
import { DevWallet } from '../../src/wallet/holder.js';
import { verifySdJwtVcIndependently } from '../helpers/sdjwt.js';
import { oidcRecordKey } from '../../src/store/oidcAdapter.js';
import { RACE_WINDOW_SECONDS } from '../../src/issuance/offers.js';

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { leaks } from '../helpers/logSecrets.js';
import {
  attributes,
  credentialRequest,
  nonce,
  offer,
  PRE_AUTH,
  proof,
  startIssuer,
  tokenRequest,
  type Running,
} from '../helpers/walletIssuer.js';

let counter = 0;

let walletDir: string;
beforeAll(async () => {
  walletDir = await mkdtemp(join(tmpdir(), 'dev-wallet-'));
});
afterAll(async () => {
  await rm(walletDir, { recursive: true, force: true });
});
const openWallet = () => DevWallet.open(join(walletDir, `wallet-${++counter}.json`));

describe('wallet-facing issuer with the dev wallet', () => {
  let running: Running;
  beforeAll(async () => {
    running = await startIssuer();
  });
  afterAll(async () => {
    await running.close();
  });

  it('delivers a PIN-protected credential into the wallet that a verifier can check on its own', async () => {
    const o = await offer(running, { pin: '4711' });
    expect(await running.issuer.offerStatus(o.offerId, o.expiresAt)).toEqual({ status: 'pending' });
    expect(o.parsed.grants[PRE_AUTH].tx_code).toMatchObject({ input_mode: 'numeric', length: 4 });

    const seen: string[] = [];
    const watchingFetch: typeof fetch = async (input, init) => {
      // between the token and the credential request the holder's prompt page shows "scanned"
      if (String(input).endsWith('/wallet/credential'))
        seen.push((await running.issuer.offerStatus(o.offerId, o.expiresAt)).status);
      return fetch(input, init);
    };
    const wallet = await openWallet();
    const stored = await wallet.receive(o.offerUri, { pin: '4711', fetch: watchingFetch });
    expect(seen).toEqual(['scanned']);
    expect(await running.issuer.offerStatus(o.offerId, o.expiresAt)).toMatchObject({ status: 'done' });

    expect(stored).toMatchObject({
      format: 'dc+sd-jwt',
      issuer: `${running.baseUrl}/wallet`,
      vct: `${running.baseUrl}/types/EmployeeBadge`,
      claims: attributes,
    });
    expect(wallet.list()).toHaveLength(1);

    const { jwks } = (await (await fetch(`${running.baseUrl}/.well-known/jwt-vc-issuer/wallet`)).json()) as {
      jwks: { keys: JWK[] };
    };
    expect(jwks.keys).toEqual(running.publicJwks.keys.map((k) => expect.objectContaining(k)));
    const verified = await verifySdJwtVcIndependently(stored.credential, jwks);
    expect(verified.header).toMatchObject({ typ: 'dc+sd-jwt', alg: 'ES256', kid: 'credential-key-1' });
    expect(verified.payload).toMatchObject({
      iss: `${running.baseUrl}/wallet`,
      vct: `${running.baseUrl}/types/EmployeeBadge`,
      exp: o.credentialExpiresAt.getTime() / 1000,
    });
    expect(verified.disclosures).toBe(Object.keys(attributes).length);
    for (const name of Object.keys(attributes)) expect(verified.payload).not.toHaveProperty(name); // all selectively disclosable
    expect(verified.claims).toMatchObject(attributes);
    const cnf = verified.payload.cnf as { jwk: JWK };
    const { d: _d, ...holderPublic } = stored.holderKey;
    expect(await calculateJwkThumbprint(cnf.jwk)).toBe(await calculateJwkThumbprint(holderPublic));
  });

  it('serves its metadata wherever wallets and verifiers look for it', async () => {
    const issuer = `${running.baseUrl}/wallet`;
    const get = async (path: string) => {
      const response = await fetch(`${running.baseUrl}${path}`);
      expect(response.status, path).toBe(200);
      return (await response.json()) as Record<string, any>;
    };
    for (const path of [
      '/.well-known/openid-credential-issuer/wallet',
      '/wallet/.well-known/openid-credential-issuer',
    ]) {
      const metadata = await get(path);
      expect(metadata).toMatchObject({
        credential_issuer: issuer,
        credential_endpoint: `${issuer}/credential`,
        nonce_endpoint: `${issuer}/challenge`,
      });
      expect(metadata.credential_configurations_supported.EmployeeBadge).toMatchObject({
        format: 'dc+sd-jwt',
        vct: `${running.baseUrl}/types/EmployeeBadge`,
        cryptographic_binding_methods_supported: ['jwk'],
        credential_signing_alg_values_supported: ['ES256'],
        proof_types_supported: { jwt: { proof_signing_alg_values_supported: expect.arrayContaining(['ES256']) } },
        credential_metadata: {
          display: [{ name: 'Employee badge', locale: 'en' }],
          claims: expect.arrayContaining([
            { path: ['FirstName'], mandatory: true, display: [{ name: 'First name', locale: 'en' }] },
          ]),
        },
      });
    }
    for (const path of [
      '/.well-known/oauth-authorization-server/wallet',
      '/wallet/.well-known/oauth-authorization-server',
    ]) {
      const metadata = await get(path);
      expect(metadata).toMatchObject({ issuer, token_endpoint: `${issuer}/token` });
      expect(metadata.grant_types_supported).toContain(PRE_AUTH);
      expect(metadata.grant_types_supported).not.toContain('implicit');
      expect(metadata.grant_types_supported).not.toContain('refresh_token');
    }
    // the aliases keep the first answer: a second request gets the same document, as JSON, with the same headers
    for (const path of [
      '/.well-known/openid-credential-issuer/wallet',
      '/.well-known/oauth-authorization-server/wallet',
    ]) {
      const [first, second] = [await fetch(`${running.baseUrl}${path}`), await fetch(`${running.baseUrl}${path}`)];
      expect(second.headers.get('content-type')).toMatch(/^application\/json/);
      expect(second.headers.get('content-type')).toBe(first.headers.get('content-type'));
      expect(second.headers.get('access-control-allow-origin')).toBe(first.headers.get('access-control-allow-origin'));
      expect(await second.json()).toEqual(await first.json());
    }
    const jwtVcIssuer = await get('/.well-known/jwt-vc-issuer/wallet');
    expect(jwtVcIssuer.issuer).toBe(issuer);
    expect(jwtVcIssuer.jwks.keys).toHaveLength(1);
    expect(jwtVcIssuer.jwks.keys[0]).not.toHaveProperty('d');
  });

  it('lets the holder retry a wrong PIN and tells how many attempts are left', async () => {
    const o = await offer(running, { pin: '1234' });
    const wallet = await openWallet();
    await expect(wallet.receive(o.offerUri, { pin: '0000' })).rejects.toThrow(
      'invalid_grant: invalid tx_code provided: 2 attempt(s) left',
    );
    expect(await running.issuer.offerStatus(o.offerId, o.expiresAt)).toMatchObject({
      status: 'pin_retry',
      attemptsLeft: 2,
    });
    await expect(wallet.receive(o.offerUri, { pin: '9999' })).rejects.toThrow(
      'invalid_grant: invalid tx_code provided: 1 attempt(s) left',
    );
    expect(await running.issuer.offerStatus(o.offerId, o.expiresAt)).toMatchObject({
      status: 'pin_retry',
      attemptsLeft: 1,
    });

    const stored = await wallet.receive(o.offerUri, { pin: '1234' });
    expect(stored.claims).toEqual(attributes);
    expect(await running.issuer.offerStatus(o.offerId, o.expiresAt)).toMatchObject({ status: 'done' });
  });

  it('revokes the offer after three wrong PINs, even for the right PIN afterwards', async () => {
    const o = await offer(running, { pin: '1234' });
    const wallet = await openWallet();
    await expect(wallet.receive(o.offerUri, { pin: '0001' })).rejects.toThrow('2 attempt(s) left');
    await expect(wallet.receive(o.offerUri, { pin: '0002' })).rejects.toThrow('1 attempt(s) left');
    await expect(wallet.receive(o.offerUri, { pin: '0003' })).rejects.toThrow(
      /^invalid_grant: invalid tx_code provided: no attempts left/,
    );
    expect(await running.issuer.offerStatus(o.offerId, o.expiresAt)).toEqual({
      status: 'failed',
      message: 'The PIN was entered wrongly 3 times; this offer is no longer valid.',
      say: { id: 'status.pinExhausted', values: { limit: 3 } },
    });

    // no provider code was ever minted for the offer (that happens once the PIN passes), and none can be now
    expect(await running.store.get(`wallet:{${o.offerId}}:code`)).toBeUndefined();
    const right = await tokenRequest(running.baseUrl, { 'pre-authorized_code': o.code, tx_code: '1234' });
    expect(right).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(wallet.list()).toEqual([]);
  });

  it('counts 20 parallel wrong guesses atomically: no more than 3 are ever evaluated', async () => {
    const o = await offer(running, { pin: '1234' });
    const guesses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        tokenRequest(running.baseUrl, { 'pre-authorized_code': o.code, tx_code: String(5000 + i) }),
      ),
    );
    expect(guesses.every((g) => g.status === 400 && g.body.error === 'invalid_grant')).toBe(true);
    const attemptsLeft = guesses
      .map((g) => /(\d+) attempt\(s\) left/.exec(g.body.error_description)?.[1])
      .filter(Boolean)
      .sort();
    expect(attemptsLeft).toEqual(['1', '2']);
    expect(await running.store.get(`wallet:{${o.offerId}}:code`)).toBeUndefined();

    const right = await tokenRequest(running.baseUrl, { 'pre-authorized_code': o.code, tx_code: '1234' });
    expect(right).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await running.issuer.offerStatus(o.offerId, o.expiresAt)).toMatchObject({ status: 'failed' });
  });

  it('answers a missing tx_code with invalid_request without using up the offer', async () => {
    const o = await offer(running, { pin: '1234' });
    const missing = await tokenRequest(running.baseUrl, { 'pre-authorized_code': o.code });
    expect(missing).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    expect(missing.body.error_description).toContain('tx_code');
    expect(await running.issuer.offerStatus(o.offerId, o.expiresAt)).toEqual({ status: 'pending' });

    // not as a value of its own (the record's random ids and hash may contain the same four digits)
    const stored = JSON.stringify(await running.store.get(`wallet:{${o.offerId}}:offer`));
    expect(leaks([stored], [{ what: 'PIN', value: '1234', isolated: true }])).toEqual([]);
    const redeemed = await tokenRequest(running.baseUrl, { 'pre-authorized_code': o.code, tx_code: '1234' });
    expect(redeemed.status).toBe(200);
    // the PIN is kept nowhere as it is: not in the offer (above), not in the provider's code minted for the
    // redemption (read before the credential is issued: the minted code's record goes with it)
    const minted = (await running.store.get(`wallet:{${o.offerId}}:code`)) as { code: string; clientId: string };
    expect(minted.clientId).toBe('wallet');
    const code = await running.store.get(oidcRecordKey('wallet', 'PreAuthorizedCode', minted.code));
    expect(code).toMatchObject({ clientId: 'wallet', accountId: o.stepId });
    expect(code).not.toHaveProperty('txCode');
  });

  it('refuses a replayed pre-authorized code and revokes what the first use issued (a replay after the race window, issue 31 §6)', async () => {
    const o = await offer(running);
    const first = await tokenRequest(running.baseUrl, { 'pre-authorized_code': o.code });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ token_type: 'Bearer', scope: 'EmployeeBadge' });
    await new Promise((resolve) => setTimeout(resolve, (RACE_WINDOW_SECONDS + 1) * 1000));
    const replay = await tokenRequest(running.baseUrl, { 'pre-authorized_code': o.code });
    expect(replay).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });

    const credential = await credentialRequest(
      running.baseUrl,
      first.body.access_token,
      await proof({ aud: `${running.baseUrl}/wallet`, nonce: await nonce(running.baseUrl) }),
    );
    expect(credential).toMatchObject({ status: 401, body: { error: 'invalid_token' } });
  }, 20_000);

  it("answers a proof for another nonce or audience with the provider's error, then issues once", async () => {
    const o = await offer(running);
    const token = await tokenRequest(running.baseUrl, { 'pre-authorized_code': o.code });
    expect(token.status).toBe(200);
    const accessToken = token.body.access_token;
    const aud = `${running.baseUrl}/wallet`;

    const staleNonce = await credentialRequest(
      running.baseUrl,
      accessToken,
      await proof({ aud, nonce: 'not-a-nonce-of-this-issuer' }),
    );
    expect(staleNonce).toMatchObject({ status: 400, body: { error: 'invalid_nonce' } });
    const wrongAud = await credentialRequest(
      running.baseUrl,
      accessToken,
      await proof({ aud: 'https://other.example/wallet', nonce: await nonce(running.baseUrl) }),
    );
    expect(wrongAud).toMatchObject({ status: 400, body: { error: 'invalid_proof' } });
    const otherType = await credentialRequest(
      running.baseUrl,
      accessToken,
      await proof({ aud, nonce: await nonce(running.baseUrl) }),
      'Unknown',
    );
    expect(otherType).toMatchObject({ status: 400, body: { error: 'unknown_credential_configuration' } });
    expect(await running.issuer.offerStatus(o.offerId, o.expiresAt)).toEqual({ status: 'scanned' });

    const issued = await credentialRequest(
      running.baseUrl,
      accessToken,
      await proof({ aud, nonce: await nonce(running.baseUrl) }),
    );
    expect(issued.status).toBe(200);
    expect(issued.body.credentials).toHaveLength(1);
    const again = await credentialRequest(
      running.baseUrl,
      accessToken,
      await proof({ aud, nonce: await nonce(running.baseUrl) }),
    );
    expect(again).toMatchObject({ status: 400, body: { error: 'credential_request_denied' } });
    expect(await running.issuer.offerStatus(o.offerId, o.expiresAt)).toMatchObject({ status: 'done' });
  });

  it('refuses a credential once its offer is gone, and writes no outcome for it', async () => {
    const o = await offer(running);
    const token = await tokenRequest(running.baseUrl, { 'pre-authorized_code': o.code });
    expect(token.status).toBe(200);
    // the offer record ends (its lifetime, or the holder's flow gave up) while the access token lives on
    await running.store.delete(`wallet:{${o.offerId}}:offer`);
    const refused = await credentialRequest(
      running.baseUrl,
      token.body.access_token,
      await proof({ aud: `${running.baseUrl}/wallet`, nonce: await nonce(running.baseUrl) }),
    );
    expect(refused).toMatchObject({
      status: 400,
      body: { error: 'credential_request_denied', error_description: 'the credential offer is no longer valid' },
    });
    expect(await running.issuer.offerStatus(o.offerId, o.expiresAt)).toEqual({ status: 'scanned' });
  });
});

describe('wallet-facing issuer whose holder flow cannot be finished', () => {
  let running: Running;
  let failures = 0;
  const seenWhileFinishing: string[] = [];
  beforeAll(async () => {
    running = await startIssuer({
      onIssued: async (issued) => {
        await new Promise((resolve) => setTimeout(resolve, 20)); // finishing takes a while: anything issued beside it has landed
        seenWhileFinishing.push((await running.issuer.offerStatus(issued.offerId, issued.redeemBy)).status);
        if (failures-- > 0) throw new StoreUnavailableError(new Error('connection lost'));
      },
    });
  });
  afterAll(async () => running.close());

  it('answers the credential request with the error and keeps the offer, so that the wallet can ask again', async () => {
    const o = await offer(running);
    const token = await tokenRequest(running.baseUrl, { 'pre-authorized_code': o.code });
    const aud = `${running.baseUrl}/wallet`;
    failures = 1;
    const failed = await credentialRequest(
      running.baseUrl,
      token.body.access_token,
      await proof({ aud, nonce: await nonce(running.baseUrl) }),
    );
    expect(failed).toMatchObject({ status: 503, body: { error: 'temporarily_unavailable' } });
    // no credential went out: the offer is back, not done
    expect(await running.issuer.offerStatus(o.offerId, o.expiresAt)).toEqual({ status: 'scanned' });
    const retried = await credentialRequest(
      running.baseUrl,
      token.body.access_token,
      await proof({ aud, nonce: await nonce(running.baseUrl) }),
    );
    expect(retried.status).toBe(200);
    expect(await running.issuer.offerStatus(o.offerId, o.expiresAt)).toMatchObject({ status: 'done' });
    // the holder's page never sees the offer done before its authorisation is finished
    expect(seenWhileFinishing).toEqual(['scanned', 'scanned']);
  });
  it('answers malformed token requests with a 400 JSON error, never a 500', async () => {
    const o = await offer(running, { pin: '1234' });
    const token = `${running.baseUrl}/wallet/token`;
    const form = `grant_type=${encodeURIComponent(PRE_AUTH)}&pre-authorized_code=${o.code}&tx_code=`;
    const cases: Array<[string, RequestInit]> = [
      ['wrong content type', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' }],
      [
        'JSON body',
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ grant_type: PRE_AUTH, 'pre-authorized_code': o.code, tx_code: '1234' }),
        },
      ],
      [
        'oversized form',
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: `${form}${'1'.repeat(100_000)}`,
        },
      ],
      [
        'oversized JSON',
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ x: 'y'.repeat(100_000) }),
        },
      ],
      ['empty form', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' }],
      ['no body', { method: 'POST' }],
      [
        'broken percent-encoding',
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: `grant_type=%E0%A4%A&pre-authorized_code=%%%`,
        },
      ],
      [
        'duplicated code',
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: `${form}1234&pre-authorized_code=${o.code}`,
        },
      ],
      [
        'duplicated tx_code',
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: `${form}1234&tx_code=1234`,
        },
      ],
      [
        'unknown grant type',
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'grant_type=password&username=a&password=b',
        },
      ],
      [
        'unknown code',
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: `grant_type=${encodeURIComponent(PRE_AUTH)}&pre-authorized_code=nope&tx_code=1234`,
        },
      ],
    ];
    for (const [name, init] of cases) {
      const response = await fetch(token, init);
      expect(response.status, name).toBe(400);
      expect(response.headers.get('content-type'), name).toMatch(/^application\/json/);
      const body = (await response.json()) as Record<string, unknown>;
      expect(typeof body.error, name).toBe('string');
      expect(typeof body.error_description, name).toBe('string');
    }
    // none of it touched the offer
    expect(await running.issuer.offerStatus(o.offerId, o.expiresAt)).toEqual({ status: 'pending' });
    expect((await (await openWallet()).receive(o.offerUri, { pin: '1234' })).claims).toEqual(attributes);
  });
});

describe('wallet-facing issuer with a third-party wallet library', () => {
  let running: Running;
  beforeAll(async () => {
    running = await startIssuer();
    setGlobalConfig({ allowInsecureUrls: true }); // the test issuer runs on http://127.0.0.1
  });
  afterAll(async () => {
    setGlobalConfig({ allowInsecureUrls: false });
    await running.close();
  });

  it('issues to @openid4vc/openid4vci, which sends resource and no client_id', async () => {
    const o = await offer(running, { pin: '2468' });
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const publicJwk = await exportJWK(publicKey);
    const tokenRequests: URLSearchParams[] = [];
    const recordingFetch: typeof fetch = async (input, init) => {
      if (String(input).endsWith('/wallet/token')) tokenRequests.push(new URLSearchParams(String(init?.body)));
      return fetch(input, init);
    };
    const client = independentWallet([{ privateKey, publicJwk }], recordingFetch);
    const credentialOffer = await client.resolveCredentialOffer(o.offerUri);
    const issuerMetadata = await client.resolveIssuerMetadata(credentialOffer.credential_issuer);
    const { accessTokenResponse } = await client.retrievePreAuthorizedCodeAccessTokenFromOffer({
      credentialOffer,
      issuerMetadata,
      txCode: '2468',
    });
    expect(tokenRequests[0].get('resource')).toBe(`${running.baseUrl}/wallet`);
    expect(tokenRequests[0].has('client_id')).toBe(false);
    const { c_nonce } = await client.requestNonce({ issuerMetadata });
    const { jwt } = await client.createCredentialRequestJwtProof({
      issuerMetadata,
      credentialConfigurationId: 'EmployeeBadge',
      nonce: c_nonce,
      signer: { method: 'jwk', alg: 'ES256', publicJwk: publicJwk as never },
    });
    const { credentialResponse } = await client.retrieveCredentials({
      issuerMetadata,
      accessToken: accessTokenResponse.access_token,
      credentialConfigurationId: 'EmployeeBadge',
      proofs: { jwt: [jwt] },
    });
    const credential = (credentialResponse.credentials?.[0] as { credential: string }).credential;
    const verified = await verifySdJwtVcIndependently(credential, running.publicJwks);
    expect(verified.claims).toMatchObject(attributes);
    expect(await calculateJwkThumbprint((verified.payload.cnf as { jwk: JWK }).jwk)).toBe(
      await calculateJwkThumbprint(publicJwk),
    );
    expect(await running.issuer.offerStatus(o.offerId, o.expiresAt)).toMatchObject({ status: 'done' });
  });
});

describe('wallet-facing issuer with short-lived offers', () => {
  let running: Running;
  beforeAll(async () => {
    running = await startIssuer({ offerLifetime: 2 });
  });
  afterEach(() => undefined);
  afterAll(async () => {
    await running.close();
  });

  it('reports an offer nobody redeemed in time as expired, and refuses its code', async () => {
    const o = await offer(running, { pin: '1234' });
    expect(await running.issuer.offerStatus(o.offerId, o.expiresAt)).toEqual({ status: 'pending' });
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(await running.issuer.offerStatus(o.offerId, o.expiresAt)).toMatchObject({ status: 'expired' });
    const late = await tokenRequest(running.baseUrl, { 'pre-authorized_code': o.code, tx_code: '1234' });
    expect(late).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });
});
