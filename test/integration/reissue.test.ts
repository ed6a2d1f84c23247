/**
 * Issue 49, re-issuance without the relying party (HAIP 1.0 §4; ARF ISSU_42, ISSU_65; RFC 6749 §6, RFC 9449
 * §5): a type with `reissue` gives the wallet a refresh_token; a refresh buys a fresh batch of the same
 * credential under the same SerialNumber until it expires or is revoked. Refresh tokens are single use
 * (rotated), DPoP-bound when DPoP was used, and limited per day. The wallet is @openid4vc/openid4vci and
 * @openid4vc/oauth2 (its refresh grant); credentials are verified with @sd-jwt/sd-jwt-vc.
 */
import { setGlobalConfig, type IssuerMetadataResult } from '@openid4vc/openid4vci';
import { getListFromStatusListJWT } from '@sd-jwt/jwt-status-list';
import { decodeJwt, exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CredentialType } from '../../src/config/schema.js';
import { REFRESH_RACE_SECONDS } from '../../src/issuance/reissues.js';
import { independentOauth2Client, independentWallet, type WalletKey } from '../helpers/openid4vci.js';
import { verifySdJwtVcIndependently } from '../helpers/sdjwt.js';
import { attributes, employeeBadge, offer, startIssuer, tokenRequest, type Running } from '../helpers/walletIssuer.js';

const renewable: CredentialType = {
  name: 'RenewableBadge',
  validity: 'P365D',
  attributes: employeeBadge.attributes,
  batchSize: 3,
  reissue: true,
};

let running: Running;

beforeAll(async () => {
  setGlobalConfig({ allowInsecureUrls: true }); // the test issuer runs on http://127.0.0.1
  running = await startIssuer({ credentialTypes: [renewable, employeeBadge], reissuesPerDay: 3 });
});
afterAll(async () => {
  setGlobalConfig({ allowInsecureUrls: false });
  await running?.close();
});

async function walletKey(): Promise<WalletKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { privateKey, publicJwk: await exportJWK(publicKey) };
}

/** A wallet with a DPoP key (or none) and its own holder keys, one per credential it asks for. */
async function walletWith(o: { dpop: boolean }) {
  const dpopKey = await walletKey();
  const keys = [dpopKey];
  const client = independentWallet(keys);
  const oauth2 = independentOauth2Client(keys);
  const dpopSigner = { method: 'jwk' as const, alg: 'ES256', publicJwk: dpopKey.publicJwk as never };
  let metadata: IssuerMetadataResult | undefined;
  let dpopNonce: string | undefined;

  /** a batch of `n` with this access token: n fresh holder keys */
  async function batch(accessToken: string, n: number, configurationId = 'RenewableBadge') {
    const holders = await Promise.all(Array.from({ length: n }, walletKey));
    keys.push(...holders);
    const { c_nonce } = await client.requestNonce({ issuerMetadata: metadata! });
    const jwts: string[] = [];
    for (const h of holders) {
      const { jwt } = await client.createCredentialRequestJwtProof({
        issuerMetadata: metadata!,
        credentialConfigurationId: configurationId,
        nonce: c_nonce,
        signer: { method: 'jwk', alg: 'ES256', publicJwk: h.publicJwk as never },
      });
      jwts.push(jwt);
    }
    const result = await client.retrieveCredentials({
      issuerMetadata: metadata!,
      accessToken,
      credentialConfigurationId: configurationId,
      proofs: { jwt: jwts },
      ...(o.dpop ? { dpop: { signer: dpopSigner, nonce: dpopNonce } } : {}),
    });
    if (result.dpop?.nonce) dpopNonce = result.dpop.nonce;
    return result;
  }

  return {
    dpopKey,
    async receive(offerUri: string) {
      const credentialOffer = await client.resolveCredentialOffer(offerUri);
      metadata = await client.resolveIssuerMetadata(credentialOffer.credential_issuer);
      const token = await client.retrievePreAuthorizedCodeAccessTokenFromOffer({
        credentialOffer,
        issuerMetadata: metadata,
        ...(o.dpop ? { dpop: { signer: dpopSigner } } : {}),
      });
      dpopNonce = token.dpop?.nonce;
      return token.accessTokenResponse;
    },
    batch,
    async refresh(refreshToken: string) {
      const result = await oauth2.retrieveRefreshTokenAccessToken({
        authorizationServerMetadata: metadata!.authorizationServers[0],
        refreshToken,
        ...(o.dpop ? { dpop: { signer: dpopSigner, nonce: dpopNonce } } : {}),
      });
      if (result.dpop?.nonce) dpopNonce = result.dpop.nonce;
      return result.accessTokenResponse;
    },
  };
}

const credentialsOf = (result: { credentialResponse: { credentials?: unknown[] } }) =>
  (result.credentialResponse.credentials as { credential: string }[]).map((c) => c.credential);

async function listedStatus(credential: string): Promise<number> {
  const { idx, uri } = (
    decodeJwt(credential.split('~')[0]) as { status: { status_list: { idx: number; uri: string } } }
  ).status.status_list;
  return getListFromStatusListJWT(await (await fetch(uri)).text()).getStatus(idx);
}

/** A raw refresh (RFC 6749 §6), optionally with a DPoP proof header. */
async function rawRefresh(refreshToken: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${running.baseUrl}/wallet/token`, {
    method: 'POST',
    headers,
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: 'wallet' }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, string> };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The OAuth error a refresh the library sent was answered with (@openid4vc/oauth2 throws it). */
const refusedWith = (refreshing: Promise<unknown>) =>
  refreshing.then(
    () => undefined,
    (e: { errorResponse?: { error?: string; error_description?: string } }) => e.errorResponse,
  );

describe('re-issuance (issue 49; HAIP 1.0 §4, ARF ISSU_42)', () => {
  it('only a type with reissue gets a refresh_token', async () => {
    const plain = await offer(running);
    const token = await tokenRequest(running.baseUrl, { 'pre-authorized_code': plain.code });
    expect(token.status).toBe(200);
    expect(token.body).not.toHaveProperty('refresh_token');
    const renewableOffer = await offer(running, { credentialType: 'RenewableBadge' });
    const renewed = await tokenRequest(running.baseUrl, { 'pre-authorized_code': renewableOffer.code });
    expect(renewed.body.refresh_token).toEqual(expect.any(String));
  });

  it('a DPoP wallet refreshes for a fresh batch: same attributes, expiry and SerialNumber, new keys and entries; revoking turns all, and refuses the next refresh', async () => {
    const o = await offer(running, { credentialType: 'RenewableBadge' });
    const wallet = await walletWith({ dpop: true });
    const first = await wallet.receive(o.offerUri);
    expect(first.token_type).toBe('DPoP');
    const firstBatch = credentialsOf(await wallet.batch(first.access_token, 3));
    const refreshed = await wallet.refresh(first.refresh_token!);
    // rotated: a new refresh token each time (single use)
    expect(refreshed.refresh_token).toEqual(expect.any(String));
    expect(refreshed.refresh_token).not.toBe(first.refresh_token);
    const secondBatch = credentialsOf(await wallet.batch(refreshed.access_token, 2));
    expect(secondBatch).toHaveLength(2);
    const all = [...firstBatch, ...secondBatch];
    const verified = await Promise.all(all.map((c) => verifySdJwtVcIndependently(c, running.publicJwks)));
    for (const v of verified) {
      expect(v.claims).toMatchObject(attributes);
      expect(v.payload.exp).toBe(verified[0].payload.exp);
    }
    const entries = all.map((c) => JSON.stringify((decodeJwt(c.split('~')[0]) as { status: unknown }).status));
    expect(new Set(entries).size).toBe(5);

    // the access token of a refresh buys one batch
    const again = await wallet.batch(refreshed.access_token, 1).then(
      () => undefined,
      (e: { response?: { credentialErrorResponseResult?: { data?: unknown } } }) =>
        e.response?.credentialErrorResponseResult?.data,
    );
    expect(again).toMatchObject({ error: 'credential_request_denied' });

    expect(await running.issuer.statuses.change(o.serialNumber, 'revoked')).toMatchObject({ credentials: 5 });
    for (const c of all) expect(await listedStatus(c)).toBe(1);
    const refused = await refusedWith(wallet.refresh(refreshed.refresh_token!));
    expect(refused).toMatchObject({ error: 'invalid_grant', error_description: expect.stringMatching(/revoked/) });
  });

  it('a refresh token is single use: a replay within the race window is refused; a later one revokes the grant', async () => {
    const o = await offer(running, { credentialType: 'RenewableBadge' });
    const wallet = await walletWith({ dpop: false });
    const first = await wallet.receive(o.offerUri);
    await wallet.batch(first.access_token, 1);
    const second = await wallet.refresh(first.refresh_token!);
    const racing = await rawRefresh(first.refresh_token!);
    expect(racing).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    await sleep((REFRESH_RACE_SECONDS + 1) * 1000);
    const replayed = await rawRefresh(first.refresh_token!);
    expect(replayed).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    // oidc-provider's reuse detection: the grant is revoked, the rotated token with it
    const afterReplay = await rawRefresh(second.refresh_token!);
    expect(afterReplay).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  }, 20_000);

  it('a DPoP-bound refresh token is refused without a proof, or with a proof of another key (stolen)', async () => {
    const o = await offer(running, { credentialType: 'RenewableBadge' });
    const wallet = await walletWith({ dpop: true });
    const first = await wallet.receive(o.offerUri);
    await wallet.batch(first.access_token, 1);
    const bare = await rawRefresh(first.refresh_token!);
    expect(bare).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    const thief = await walletWith({ dpop: true });
    // the thief's client knows the issuer's metadata through an offer of its own
    await thief.receive((await offer(running)).offerUri);
    expect(await refusedWith(thief.refresh(first.refresh_token!))).toMatchObject({ error: 'invalid_grant' });
    // the holder's own refresh still works: refused attempts did not use the token up
    expect((await wallet.refresh(first.refresh_token!)).access_token).toEqual(expect.any(String));
  });

  it('a suspended SerialNumber refuses the refresh until reinstated; an expired credential refuses it for good', async () => {
    const o = await offer(running, { credentialType: 'RenewableBadge' });
    const wallet = await walletWith({ dpop: false });
    const first = await wallet.receive(o.offerUri);
    await wallet.batch(first.access_token, 1);
    await running.issuer.statuses.change(o.serialNumber, 'suspended');
    const suspended = await rawRefresh(first.refresh_token!);
    expect(suspended).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(suspended.body.error_description).toMatch(/suspended/);
    await running.issuer.statuses.change(o.serialNumber, 'valid');
    expect((await wallet.refresh(first.refresh_token!)).access_token).toEqual(expect.any(String));

    const soon = new Date(Date.now() + 3000);
    const short = await offer(running, { credentialType: 'RenewableBadge', credentialExpiresAt: soon });
    const shortWallet = await walletWith({ dpop: false });
    const shortToken = await shortWallet.receive(short.offerUri);
    await shortWallet.batch(shortToken.access_token, 1);
    await sleep(4000);
    const expired = await rawRefresh(shortToken.refresh_token!);
    expect(expired).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  }, 20_000);

  it('at most reissuesPerDay refreshes of one credential (429, Retry-After); a token that issued nothing is refused', async () => {
    const o = await offer(running, { credentialType: 'RenewableBadge' });
    const wallet = await walletWith({ dpop: false });
    let token = await wallet.receive(o.offerUri);
    // no credential issued with this grant yet: the refresh is refused and does not count
    expect(await rawRefresh(token.refresh_token!)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    await wallet.batch(token.access_token, 1);
    for (let i = 0; i < 3; i++) token = await wallet.refresh(token.refresh_token!);
    const limited = await fetch(`${running.baseUrl}/wallet/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: token.refresh_token!,
        client_id: 'wallet',
      }),
    });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('3600');
    expect(await limited.json()).toMatchObject({ error: 'temporarily_unavailable' });
  });
});
