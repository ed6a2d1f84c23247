/**
 * Issue 49, one-time-use credentials (OpenID4VCI 1.0 §8.2 `proofs`, §8.3 credential response, §12.2.4
 * `batch_credential_issuance`; ARF ISSU_35, ISSU_36, ISSU_39, ISSU_43): one credential per proved key, up to the
 * type's batch size, each with its own status entry, salts and signature, the same attributes and validity, and
 * whole-hour timestamps; all or nothing. The wallet is @openid4vc/openid4vci; every SD-JWT VC is verified with
 * @sd-jwt/sd-jwt-vc and every mdoc with @auth0/mdl, never with the service's code. Bad batches are sent raw.
 */
import { createHash, X509Certificate } from 'node:crypto';
import { setGlobalConfig } from '@openid4vc/openid4vci';
import { Verifier } from '@auth0/mdl';
import { getListFromStatusListJWT } from '@sd-jwt/jwt-status-list';
import { calculateJwkThumbprint, decodeJwt, exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CredentialType } from '../../src/config/schema.js';
import { documentSignerKey, generateDocumentSigner, generateIssuerCa } from '../../src/keys/issuerCertificate.js';
import { independentWallet } from '../helpers/openid4vci.js';
import { oid4vpSessionTranscriptBytes, presentWithAuth0 } from '../helpers/mdoc.js';
import { verifySdJwtVcIndependently } from '../helpers/sdjwt.js';
import {
  attributes,
  employeeBadge,
  nonce,
  offer,
  startIssuer,
  tokenRequest,
  type Running,
} from '../helpers/walletIssuer.js';

const DOCTYPE = 'org.example.batch.1';
const batchBadge: CredentialType = {
  name: 'BatchBadge',
  validity: 'P365D',
  attributes: employeeBadge.attributes,
  batchSize: 10,
  mdoc: { doctype: DOCTYPE, namespace: DOCTYPE },
};

let running: Running;
let iaca: string;
/** the document signer's notBefore (epoch seconds): no MSO is signed before it */
let signerFrom: number;
/** told to fail the flow's outcome once: a batch signed but not delivered */
let failNextOutcome = false;

beforeAll(async () => {
  setGlobalConfig({ allowInsecureUrls: true }); // the test issuer runs on http://127.0.0.1
  const ca = await generateIssuerCa('127.0.0.1');
  iaca = ca.certificate;
  const signer = await generateDocumentSigner(ca, '127.0.0.1');
  signerFrom = new Date(new X509Certificate(signer.certificate).validFrom).getTime() / 1000;
  const key = await documentSignerKey({ chain: signer.certificate, key: signer.key }, { chain: 'chain', key: 'key' });
  running = await startIssuer({
    credentialTypes: [batchBadge, employeeBadge],
    documentSigners: { current: async () => key },
    onIssued: async () => {
      if (!failNextOutcome) return;
      failNextOutcome = false;
      throw new Error('the step could not be told');
    },
  });
});
afterAll(async () => {
  setGlobalConfig({ allowInsecureUrls: false });
  await running?.close();
});

const endpoint = (path: string) => `${running.baseUrl}/wallet/${path}`;

async function holderKey() {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { privateKey, publicJwk: await exportJWK(publicKey), privateJwk: await exportJWK(privateKey) };
}
type Holder = Awaited<ReturnType<typeof holderKey>>;

/** The independent wallet redeems the offer and asks for one credential per key, in one request. */
async function receiveBatch(offerUri: string, configurationId: string, holders: Holder[]) {
  const client = independentWallet(holders);
  const credentialOffer = await client.resolveCredentialOffer(offerUri);
  const issuerMetadata = await client.resolveIssuerMetadata(credentialOffer.credential_issuer);
  const { accessTokenResponse } = await client.retrievePreAuthorizedCodeAccessTokenFromOffer({
    credentialOffer,
    issuerMetadata,
  });
  const { c_nonce } = await client.requestNonce({ issuerMetadata });
  const jwts: string[] = [];
  for (const holder of holders) {
    const { jwt } = await client.createCredentialRequestJwtProof({
      issuerMetadata,
      credentialConfigurationId: configurationId,
      nonce: c_nonce,
      signer: { method: 'jwk', alg: 'ES256', publicJwk: holder.publicJwk as never },
    });
    jwts.push(jwt);
  }
  const { credentialResponse } = await client.retrieveCredentials({
    issuerMetadata,
    accessToken: accessTokenResponse.access_token,
    credentialConfigurationId: configurationId,
    proofs: { jwt: jwts },
  });
  return (credentialResponse.credentials as { credential: string }[]).map((c) => c.credential);
}

/** A jwt proof made with jose: `signWith` another key than the one it names makes its signature bad. */
async function proofOf(holder: Holder, o: { nonce: string; signWith?: Holder }): Promise<string> {
  return new SignJWT({ nonce: o.nonce })
    .setProtectedHeader({ alg: 'ES256', typ: 'openid4vci-proof+jwt', jwk: holder.publicJwk })
    .setAudience(`${running.baseUrl}/wallet`)
    .setIssuedAt()
    .sign((o.signWith ?? holder).privateKey);
}

async function batchRequest(accessToken: string, proofs: string[], configurationId = 'BatchBadge') {
  const response = await fetch(endpoint('credential'), {
    method: 'POST',
    headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ credential_configuration_id: configurationId, proofs: { jwt: proofs } }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function redeem(o: { code: string }): Promise<string> {
  const token = await tokenRequest(running.baseUrl, { 'pre-authorized_code': o.code });
  expect(token.status, JSON.stringify(token.body)).toBe(200);
  return token.body.access_token;
}

const statusOf = (credential: string) =>
  (decodeJwt(credential.split('~')[0]) as { status: { status_list: { idx: number; uri: string } } }).status.status_list;

async function listedStatus(credential: string): Promise<number> {
  const { idx, uri } = statusOf(credential);
  return getListFromStatusListJWT(await (await fetch(uri)).text()).getStatus(idx);
}

const HOUR = 3600;

describe('metadata (OpenID4VCI 1.0 §12.2.4; ETSI TS 119 472-3 §4.2.4.2, ARF ISSU_39)', () => {
  it('publishes batch_size and, for the batch type only, a once-only reuse policy; the independent wallet parses it', async () => {
    const client = independentWallet([await holderKey()]);
    const metadata = await client.resolveIssuerMetadata(`${running.baseUrl}/wallet`);
    expect(metadata.credentialIssuer.batch_credential_issuance).toEqual({ batch_size: 10 });
    const configurations = metadata.credentialIssuer.credential_configurations_supported as unknown as Record<
      string,
      { credential_metadata: Record<string, unknown> }
    >;
    const policy = {
      id: 'arf_annex_ii',
      options: [{ details: ['once_only'], batch_size: 10, reissue_trigger_unused: 2 }],
    };
    expect(configurations.BatchBadge.credential_metadata.credential_reuse_policy).toEqual(policy);
    expect(configurations['BatchBadge.mso_mdoc'].credential_metadata.credential_reuse_policy).toEqual(policy);
    expect(configurations.EmployeeBadge.credential_metadata).not.toHaveProperty('credential_reuse_policy');
  });
});

describe('a batch of SD-JWT VCs', () => {
  it('issue 49: ten keys, ten credentials: same attributes and validity, own status entries, salts and digests, whole-hour timestamps; revoking the SerialNumber turns all', async () => {
    // not on a whole hour: the credentials' exp is rounded down (ISSU_36)
    const credentialExpiresAt = new Date(Date.UTC(2030, 0, 1, 12, 34, 56));
    const o = await offer(running, { credentialType: 'BatchBadge', credentialExpiresAt });
    const holders = await Promise.all(Array.from({ length: 10 }, holderKey));
    const before = Math.floor(Date.now() / 1000);
    const credentials = await receiveBatch(o.offerUri, 'BatchBadge', holders);
    expect(credentials).toHaveLength(10);

    const verified = await Promise.all(credentials.map((c) => verifySdJwtVcIndependently(c, running.publicJwks)));
    for (const [i, v] of verified.entries()) {
      expect(v.claims).toMatchObject(attributes);
      // each bound to its own key, in the order of the proofs
      expect(await calculateJwkThumbprint((v.payload.cnf as { jwk: JWK }).jwk)).toBe(
        await calculateJwkThumbprint(holders[i].publicJwk),
      );
      expect(v.payload.exp).toBe(Date.UTC(2030, 0, 1, 12) / 1000);
      expect(v.payload.iat).toBe(Math.floor(before / HOUR) * HOUR);
    }
    // ISSU_35: nothing a relying party could compare is shared: status entries, salts, digests, signatures
    const entries = credentials.map(statusOf).map((s) => `${s.uri}#${s.idx}`);
    expect(new Set(entries).size).toBe(10);
    const disclosures = credentials.flatMap((c) => c.split('~').slice(1, -1));
    const salts = disclosures.map((d) => (JSON.parse(Buffer.from(d, 'base64url').toString()) as string[])[0]);
    expect(new Set(salts).size).toBe(disclosures.length);
    const digests = verified.flatMap((v) => v.payload._sd as string[]);
    expect(new Set(digests).size).toBe(digests.length);
    expect(digests).toHaveLength(disclosures.length);
    expect(new Set(credentials.map((c) => c.split('~')[0].split('.')[2])).size).toBe(10);
    expect(disclosures.every((d) => digests.includes(createHash('sha256').update(d).digest('base64url')))).toBe(true);

    for (const c of credentials) expect(await listedStatus(c)).toBe(0);
    // D18, issue 49: the SerialNumber names the issuance; revoking it revokes every credential of the batch
    expect(await running.issuer.statuses.change(o.serialNumber, 'revoked')).toMatchObject({
      changed: true,
      credentials: 10,
    });
    for (const c of credentials) expect(await listedStatus(c)).toBe(1);
  });

  it('suspending and reinstating the SerialNumber acts on every credential of the batch', async () => {
    const o = await offer(running, { credentialType: 'BatchBadge' });
    const credentials = await receiveBatch(o.offerUri, 'BatchBadge', await Promise.all([holderKey(), holderKey()]));
    await running.issuer.statuses.change(o.serialNumber, 'suspended');
    expect(await Promise.all(credentials.map(listedStatus))).toEqual([2, 2]);
    await running.issuer.statuses.change(o.serialNumber, 'valid');
    expect(await Promise.all(credentials.map(listedStatus))).toEqual([0, 0]);
  });

  it('one proof is one credential, as before, for a batch type too', async () => {
    const o = await offer(running, { credentialType: 'BatchBadge' });
    expect(await receiveBatch(o.offerUri, 'BatchBadge', [await holderKey()])).toHaveLength(1);
  });
});

describe('all or nothing: a bad batch gets the OpenID4VCI error and no credential (§8.3.1.2)', () => {
  it.each([
    ['over the issuer batch_size (11 proofs)', 'invalid_proof', 'BatchBadge', 11, {}],
    ["over the type's batch size (2 proofs for a type of 1)", 'invalid_proof', 'EmployeeBadge', 2, {}],
    ['one key proved twice', 'invalid_proof', 'BatchBadge', 3, { duplicate: true }],
    ["one proof with another issuer's nonce", 'invalid_nonce', 'BatchBadge', 3, { foreignNonce: true }],
    ['one proof with a bad signature', 'invalid_proof', 'BatchBadge', 3, { badSignature: true }],
  ] as const)(
    '%s -> %s; nothing issued or allocated, and the offer then issues a good batch',
    async (_, error, type, n, fault) => {
      const o = await offer(running, { credentialType: type });
      const accessToken = await redeem(o);
      const c = await nonce(running.baseUrl);
      const holders = await Promise.all(Array.from({ length: n }, holderKey));
      const proofs = await Promise.all(holders.map((h) => proofOf(h, { nonce: c })));
      const last = n - 1;
      if ('duplicate' in fault) proofs[last] = await proofOf(holders[0], { nonce: c });
      if ('foreignNonce' in fault) proofs[last] = await proofOf(holders[last], { nonce: 'a nonce of another issuer' });
      if ('badSignature' in fault) proofs[last] = await proofOf(holders[last], { nonce: c, signWith: holders[0] });
      const refused = await batchRequest(accessToken, proofs, type);
      expect(refused.status, JSON.stringify(refused.body)).toBe(400);
      expect(refused.body).toMatchObject({ error });
      expect(refused.body).not.toHaveProperty('credentials');
      expect(String(refused.body.error_description)).toMatch(/proof|nonce|batch/);
      expect(await running.issuer.statuses.status(o.serialNumber)).toBeUndefined();
      // the offer was not taken: the same token buys a good batch
      const good = await batchRequest(accessToken, proofs.slice(0, type === 'EmployeeBadge' ? 1 : 2), type);
      expect(good.status, JSON.stringify(good.body)).toBe(200);
      expect(good.body.credentials).toHaveLength(type === 'EmployeeBadge' ? 1 : 2);
    },
  );

  it('a batch signed but whose flow could not be told is taken back whole: no entry stays; a retry issues', async () => {
    const o = await offer(running, { credentialType: 'BatchBadge' });
    const accessToken = await redeem(o);
    const c = await nonce(running.baseUrl);
    const proofs = await Promise.all(
      (await Promise.all([holderKey(), holderKey(), holderKey()])).map((h) => proofOf(h, { nonce: c })),
    );
    failNextOutcome = true;
    const failed = await batchRequest(accessToken, proofs);
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect(failed.body).not.toHaveProperty('credentials');
    expect(await running.issuer.statuses.status(o.serialNumber)).toBeUndefined();
    const retried = await batchRequest(accessToken, proofs);
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    expect(await running.issuer.statuses.change(o.serialNumber, 'revoked')).toMatchObject({ credentials: 3 });
  });
});

describe('a batch of mdocs (one MSO per device key)', () => {
  it('issue 49: three device keys, three mdocs that @auth0/mdl verifies, each its own MSO, whole-hour validity; revoke names all', async () => {
    const o = await offer(running, { credentialType: 'BatchBadge' });
    const holders = await Promise.all([holderKey(), holderKey(), holderKey()]);
    const before = Math.floor(Date.now() / 1000);
    const credentials = await receiveBatch(o.offerUri, 'BatchBadge.mso_mdoc', holders);
    expect(credentials).toHaveLength(3);
    const signatures = new Set<string>();
    for (const [i, credential] of credentials.entries()) {
      const handover = { clientId: 'x509_hash:test', nonce: `n-${i}`, responseUri: 'https://rp.example/response' };
      const deviceResponse = await presentWithAuth0({
        issuerSigned: credential,
        doctype: DOCTYPE,
        namespace: DOCTYPE,
        elements: ['FirstName', 'LastName'],
        deviceKey: holders[i].privateJwk,
        ...handover,
      });
      const mdoc = await new Verifier([iaca]).verify(Buffer.from(deviceResponse, 'base64url'), {
        encodedSessionTranscript: oid4vpSessionTranscriptBytes(handover),
      });
      const [document] = mdoc.documents;
      expect(document.getIssuerNameSpace(DOCTYPE)).toEqual({ FirstName: 'Ada', LastName: 'Lovelace' });
      const { validityInfo } = document.issuerSigned.issuerAuth.decodedPayload;
      // the whole hour, unless the document signer is younger (an MSO is signed within its signer's validity)
      expect(validityInfo.validFrom.getTime() / 1000).toBe(Math.max(Math.floor(before / HOUR) * HOUR, signerFrom));
      expect(validityInfo.signed.getTime()).toBe(validityInfo.validFrom.getTime());
      expect((validityInfo.validUntil.getTime() / 1000) % HOUR).toBe(0);
      signatures.add(Buffer.from(document.issuerSigned.issuerAuth.signature).toString('base64url'));
    }
    expect(signatures.size).toBe(3);
    expect(await running.issuer.statuses.change(o.serialNumber, 'revoked')).toMatchObject({
      format: 'mso_mdoc',
      credentials: 3,
    });
  });

  it('a batch with one key that cannot be a device key (P-384) is refused whole', async () => {
    const o = await offer(running, { credentialType: 'BatchBadge' });
    const accessToken = await redeem(o);
    const c = await nonce(running.baseUrl);
    const p256 = await holderKey();
    const { privateKey, publicKey } = await generateKeyPair('ES384');
    const p384 = await new SignJWT({ nonce: c })
      .setProtectedHeader({ alg: 'ES384', typ: 'openid4vci-proof+jwt', jwk: await exportJWK(publicKey) })
      .setAudience(`${running.baseUrl}/wallet`)
      .setIssuedAt()
      .sign(privateKey);
    const refused = await batchRequest(accessToken, [await proofOf(p256, { nonce: c }), p384], 'BatchBadge.mso_mdoc');
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: 'invalid_proof' });
    expect(await running.issuer.statuses.status(o.serialNumber)).toBeUndefined();
  });
});
