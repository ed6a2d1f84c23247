/**
 * D18 end to end: a credential issued through the issuance flow (openid-client as the relying party) is
 * revoked, suspended and reinstated by its SerialNumber through the operator API; the Status List Token is
 * fetched and decoded with @sd-jwt/jwt-status-list, independently of the service; a presentation of the
 * credential is refused with "credential revoked" / "credential suspended", and accepted again once
 * reinstated. A credential received by the independent @openid4vc/openid4vci wallet is refused alike. A
 * trusted external issuer's status list is served by a real HTTP server of the test.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ES256, digest, generateSalt } from '@sd-jwt/crypto-nodejs';
import { getListFromStatusListJWT, StatusList } from '@sd-jwt/jwt-status-list';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { setGlobalConfig } from '@openid4vc/openid4vci';
import { decodeJwt, importJWK, SignJWT, type JWK } from 'jose';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holderCompletesIssuance, newWallet, pushIssuance, verifyEmployeeBadge as verify } from '../helpers/flows.js';
import { REDIRECT, SECRETS, startTestService, type TestService } from '../helpers/service.js';
import { Browser, offerFromPage } from '../helpers/rp.js';
import { independentWallet } from '../helpers/openid4vci.js';
import type { DevWallet } from '../../src/wallet/holder.js';
import { keyPair } from '../helpers/keys.js';

const ADMIN_TOKEN = 'admin-token-for-the-tests-0123456789abcdef';
let t: TestService;

/** An EmployeeBadge issued into a fresh wallet; the SerialNumber from the relying party's ID token. */
async function issueBadge(
  base: string,
  firstName: string,
): Promise<{ wallet: DevWallet; serialNumber: string; credential: string }> {
  const wallet = await newWallet();
  const rp = await pushIssuance(base, {
    clientId: 'issuer-pkce',
    secret: SECRETS.pkceIssuer,
    attributes: { FirstName: firstName, LastName: 'Lovelace' },
    pin: '1234',
    redirectUri: REDIRECT,
  });
  const { callbackUrl } = await holderCompletesIssuance(rp.authorizeUrl.href, {
    redirectUri: REDIRECT,
    wallet,
    pin: '1234',
  });
  const tokens = await oidc.authorizationCodeGrant(rp.config, new URL(callbackUrl), {
    pkceCodeVerifier: rp.verifier,
    expectedState: rp.state,
    expectedNonce: rp.nonce,
  });
  const serialNumber = tokens.claims()!.SerialNumber as string;
  expect(serialNumber).toBe(tokens.claims()!.sub); // D2
  return { wallet, serialNumber, credential: wallet.list()[0].credential };
}

const admin = (base: string, path: string, init: { method?: string; token?: string | null } = {}) =>
  fetch(`${base}/admin/credentials/${path}`, {
    method: init.method ?? 'POST',
    headers: init.token === null ? {} : { authorization: `Bearer ${init.token ?? ADMIN_TOKEN}` },
  }).then(async (r) => ({ status: r.status, body: await r.json(), headers: r.headers }));

function statusReference(credential: string): { idx: number; uri: string } {
  return (decodeJwt(credential.split('~')[0]) as { status: { status_list: { idx: number; uri: string } } }).status
    .status_list;
}

beforeAll(async () => {
  // ttl 1 s: a verifier caches a list for its ttl, so a reinstatement shows a second later
  t = await startTestService({ admin: { token: ADMIN_TOKEN }, statusList: { ttl: 1 } });
});
afterAll(async () => t?.stop());

describe('revocation by SerialNumber (D18)', () => {
  it('revoke: the list says 1 at once, the presentation is refused with "credential revoked", and revocation is final', async () => {
    const { wallet, serialNumber, credential } = await issueBadge(t.url, 'Ada');
    const { idx, uri } = statusReference(credential);
    expect(uri).toMatch(new RegExp(`^${t.url}/wallet/status/[A-Za-z0-9_-]+$`));

    expect(await admin(t.url, encodeURIComponent(serialNumber), { method: 'GET' })).toMatchObject({
      status: 200,
      body: { serialNumber, status: 'valid' },
    });
    expect(await admin(t.url, `${encodeURIComponent(serialNumber)}/revoke`)).toMatchObject({
      status: 200,
      body: { serialNumber, status: 'revoked', changed: true },
    });

    // the Status List Token, decoded independently
    const served = await fetch(uri);
    expect(served.headers.get('content-type')).toBe('application/statuslist+jwt');
    expect(getListFromStatusListJWT(await served.text()).getStatus(idx)).toBe(1);

    const refused = await verify(t.url, wallet);
    expect(refused.presented.status).toBe(400);
    expect(refused.callback.searchParams.get('error')).toBe('access_denied');
    expect(refused.callback.searchParams.get('error_description')).toMatch(/credential revoked/);

    // revoking again changes nothing; reinstating or suspending a revoked credential is refused
    expect(await admin(t.url, `${encodeURIComponent(serialNumber)}/revoke`)).toMatchObject({
      status: 200,
      body: { status: 'revoked', changed: false },
    });
    expect(await admin(t.url, `${encodeURIComponent(serialNumber)}/reinstate`)).toMatchObject({
      status: 409,
      body: { error: 'conflict' },
    });
    expect(await admin(t.url, `${encodeURIComponent(serialNumber)}/suspend`)).toMatchObject({ status: 409 });
  });

  it('suspend: refused with "credential suspended"; reinstate: accepted again once the verifier\'s cached list expires', async () => {
    const { wallet, serialNumber, credential } = await issueBadge(t.url, 'Grace');
    const { idx, uri } = statusReference(credential);
    expect(await admin(t.url, `${serialNumber}/suspend`)).toMatchObject({ status: 200, body: { status: 'suspended' } });
    expect(getListFromStatusListJWT(await (await fetch(uri)).text()).getStatus(idx)).toBe(2);
    // the verifier may hold the list from the test before for its ttl
    await new Promise((r) => setTimeout(r, 1100));
    const refused = await verify(t.url, wallet);
    expect(refused.callback.searchParams.get('error_description')).toMatch(/credential suspended/);

    expect(await admin(t.url, `${serialNumber}/reinstate`)).toMatchObject({
      status: 200,
      body: { status: 'valid', changed: true },
    });
    expect(getListFromStatusListJWT(await (await fetch(uri)).text()).getStatus(idx)).toBe(0);
    await new Promise((r) => setTimeout(r, 1100));
    const accepted = await verify(t.url, wallet);
    expect(accepted.presented.status).toBe(200);
    expect(accepted.callback.searchParams.get('code')).toBeTruthy();
  });
});

describe('revocation of a credential the independent wallet received (@openid4vc/openid4vci)', () => {
  beforeAll(() => setGlobalConfig({ allowInsecureUrls: true })); // the service runs on http://127.0.0.1
  afterAll(() => setGlobalConfig({ allowInsecureUrls: false }));

  it('is refused once revoked, presented from the dev wallet it was imported into', async () => {
    const rp = await pushIssuance(t.url, {
      clientId: 'issuer-pkce',
      secret: SECRETS.pkceIssuer,
      attributes: { FirstName: 'Mary', LastName: 'Somerville' },
      pin: '1234',
      redirectUri: REDIRECT,
    });
    const browser = new Browser(REDIRECT);
    const prompt = await browser.follow(rp.authorizeUrl.href);
    const { privateKey, publicJwk, privateJwk } = await keyPair();
    const client = independentWallet([{ privateKey, publicJwk }]);
    const credentialOffer = await client.resolveCredentialOffer(offerFromPage(prompt.html!));
    const issuerMetadata = await client.resolveIssuerMetadata(credentialOffer.credential_issuer);
    const { accessTokenResponse } = await client.retrievePreAuthorizedCodeAccessTokenFromOffer({
      credentialOffer,
      issuerMetadata,
      txCode: '1234',
    });
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
    const done = await browser.follow(`${prompt.final}/continue`);
    const tokens = await oidc.authorizationCodeGrant(rp.config, new URL(done.final), {
      pkceCodeVerifier: rp.verifier,
      expectedState: rp.state,
      expectedNonce: rp.nonce,
    });
    const serialNumber = tokens.claims()!.SerialNumber as string;

    const wallet = await newWallet();
    await wallet.import(credential, privateJwk);
    expect(await admin(t.url, `${serialNumber}/revoke`)).toMatchObject({ status: 200, body: { status: 'revoked' } });
    await new Promise((r) => setTimeout(r, 1100)); // a list the verifier may hold from an earlier test
    const refused = await verify(t.url, wallet);
    expect(refused.callback.searchParams.get('error_description')).toMatch(/credential revoked/);
  });
});

describe('the operator API (D18)', () => {
  it('refuses a missing or wrong token (401), and answers 404 for an unknown SerialNumber', async () => {
    const none = await admin(t.url, 'whatever/revoke', { token: null });
    expect(none).toMatchObject({ status: 401, body: { error: 'invalid_token' } });
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect(await admin(t.url, 'whatever/revoke', { token: `${ADMIN_TOKEN}x` })).toMatchObject({ status: 401 });
    expect(await admin(t.url, 'whatever/revoke', { token: ADMIN_TOKEN.slice(0, -1) })).toMatchObject({ status: 401 });
    const unknown = await admin(t.url, 'no-such-serial/revoke');
    expect(unknown).toMatchObject({ status: 404, body: { error: 'not_found' } });
    expect(unknown.body.error_description).toMatch(/SerialNumber/);
    expect((await admin(t.url, 'x/destroy')).status).toBe(404);
  });

  it('is not there without admin.token', async () => {
    const plain = await startTestService();
    try {
      expect(
        (
          await fetch(`${plain.url}/admin/credentials/x/revoke`, {
            method: 'POST',
            headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
          })
        ).status,
      ).toBe(404);
    } finally {
      await plain.stop();
    }
  });
});

describe("a trusted external issuer's status list", () => {
  let listServer: Server;
  let listBase: string;
  let issuerKey: { privateJwk: JWK; publicJwk: JWK };
  let listJwt = '';

  beforeAll(async () => {
    issuerKey = await keyPair('ext-1');
    listServer = createServer((req, res) => {
      if (req.url?.startsWith('/lists/1')) {
        res.writeHead(200, { 'content-type': 'application/statuslist+jwt' }).end(listJwt);
      } else if (req.url === '/elsewhere') {
        res.writeHead(302, { location: 'http://localhost:1/lists/1' }).end();
      } else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => listServer.listen(0, '127.0.0.1', resolve));
    listBase = `http://127.0.0.1:${(listServer.address() as AddressInfo).port}`;
    // entry 3 revoked, the others valid
    const list = new StatusList(
      new Array(1024).fill(0).map((_, i) => (i === 3 ? 1 : 0)),
      1,
    );
    listJwt = await new SignJWT({ status_list: { bits: 1, lst: list.compressStatusList() }, ttl: 60 })
      .setProtectedHeader({ alg: 'ES256', typ: 'statuslist+jwt', kid: 'ext-1' })
      .setSubject(`${listBase}/lists/1`)
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(await importJWK(issuerKey.privateJwk, 'ES256'));
  });
  afterAll(() => new Promise<void>((resolve) => listServer.close(() => resolve())));

  /** An EmployeeBadge of the external issuer with the given status reference, in a fresh wallet. */
  async function externalBadge(base: string, status: { idx: number; uri: string }): Promise<DevWallet> {
    const holder = await keyPair();
    const sdJwt = new SDJwtVcInstance({
      signer: await ES256.getSigner(issuerKey.privateJwk),
      signAlg: 'ES256',
      hasher: digest,
      hashAlg: 'sha-256',
      saltGenerator: generateSalt,
    });
    const now = Math.floor(Date.now() / 1000);
    const credential = await sdJwt.issue(
      {
        FirstName: 'Ext',
        LastName: 'Ernal',
        iss: listBase,
        vct: `${base}/types/EmployeeBadge`,
        iat: now,
        exp: now + 3600,
        cnf: { jwk: holder.publicJwk },
        status: { status_list: status },
      },
      { _sd: ['FirstName', 'LastName'] } as never,
      { header: { kid: 'ext-1' } },
    );
    const wallet = await newWallet();
    await wallet.import(credential, holder.privateJwk);
    return wallet;
  }

  const withIssuer = (onUnavailable: 'refuse' | 'accept') =>
    startTestService({
      trustedIssuers: [{ issuer: listBase, jwks: { keys: [issuerKey.publicJwk] } }],
      statusList: { onUnavailable },
    });

  it('refuses its revoked credential and accepts a valid one', async () => {
    const s = await withIssuer('refuse');
    try {
      const revoked = await verify(s.url, await externalBadge(s.url, { idx: 3, uri: `${listBase}/lists/1` }));
      expect(revoked.callback.searchParams.get('error_description')).toMatch(/credential revoked/);
      const valid = await verify(s.url, await externalBadge(s.url, { idx: 4, uri: `${listBase}/lists/1` }));
      expect(valid.callback.searchParams.get('code')).toBeTruthy();
    } finally {
      await s.stop();
    }
  });

  it("a list that cannot be had: refused under onUnavailable refuse, accepted under accept; a list that is not the issuer's is refused under both", async () => {
    const refuse = await withIssuer('refuse');
    const accept = await withIssuer('accept');
    try {
      for (const uri of [`${listBase}/missing`, 'http://127.0.0.1:1/lists/1', `${listBase}/elsewhere`]) {
        const refused = await verify(refuse.url, await externalBadge(refuse.url, { idx: 4, uri }));
        expect(refused.callback.searchParams.get('error_description'), uri).toMatch(/credential status unavailable/);
        const accepted = await verify(accept.url, await externalBadge(accept.url, { idx: 4, uri }));
        expect(accepted.callback.searchParams.get('code'), uri).toBeTruthy();
      }
      // served at another URI than its sub: not to be trusted, whatever the setting
      const aliased = await verify(
        accept.url,
        await externalBadge(accept.url, { idx: 4, uri: `${listBase}/lists/1?alias` }),
      );
      expect(aliased.callback.searchParams.get('error_description')).toMatch(/credential status invalid/);
    } finally {
      await Promise.all([refuse.stop(), accept.stop()]);
    }
  });
});
