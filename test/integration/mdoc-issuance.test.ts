/**
 * ISO mdoc issuance beside SD-JWT VC (OpenID4VCI 1.0 Appendix A.2): a type with `mdoc` has a second
 * configuration, `<name>.mso_mdoc`; the offer names both and the wallet picks one. The wallet is
 * @openid4vc/openid4vci; the issued IssuerSigned is checked by @auth0/mdl's own Verifier against the
 * issuer CA (the IACA), never by the service's code.
 */
import { setGlobalConfig } from '@openid4vc/openid4vci';
import { Verifier } from '@auth0/mdl';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { independentWallet } from '../helpers/openid4vci.js';
import { oid4vpSessionTranscriptBytes, presentWithAuth0 } from '../helpers/mdoc.js';
import {
  attributes,
  credentialRequest,
  employeeBadge,
  nonce,
  offer,
  startIssuer,
  tokenRequest,
  type Running,
} from '../helpers/walletIssuer.js';
import {
  documentSignerKey,
  generateDocumentSigner,
  generateIssuerCa,
  type IssuerCa,
} from '../../src/keys/issuerCertificate.js';
import type { CredentialType } from '../../src/config/schema.js';

const DOCTYPE = 'org.example.employee.1';
const NAMESPACE = 'org.example.employee.1';

const badge = { ...employeeBadge, mdoc: { doctype: DOCTYPE, namespace: NAMESPACE } } satisfies CredentialType;
const card = {
  name: 'MembershipCard',
  validity: 'P30D',
  attributes: { MemberName: { type: 'string', required: true }, Since: { type: 'date', required: true } },
} satisfies CredentialType;

const pass = {
  name: 'Pass',
  validity: 'P7D',
  mdoc: { doctype: 'org.example.pass.1', namespace: 'org.example.pass.1' },
  attributes: {
    Photo: { type: 'image', required: true },
    Born: { type: 'date', required: true },
    Seen: { type: 'date', required: true },
    Visits: { type: 'number', required: true },
    Premium: { type: 'boolean', required: true },
  },
} satisfies CredentialType;

let running: Running;
let ca: IssuerCa;
let key: Awaited<ReturnType<typeof documentSignerKey>>;

beforeAll(async () => {
  setGlobalConfig({ allowInsecureUrls: true }); // the test issuer runs on http://127.0.0.1
  ca = await generateIssuerCa('127.0.0.1');
  const signer = await generateDocumentSigner(ca, '127.0.0.1');
  key = await documentSignerKey(
    { chain: signer.certificate, key: signer.key },
    { chain: 'test chain', key: 'test key' },
  );
  running = await startIssuer({
    credentialTypes: [badge, card as CredentialType, pass as CredentialType],
    documentSigners: { current: async () => key },
  });
});
afterAll(async () => {
  setGlobalConfig({ allowInsecureUrls: false });
  await running?.close();
});

async function holderKey(alg: 'ES256' | 'ES384' = 'ES256') {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { privateKey, publicJwk: await exportJWK(publicKey), privateJwk: await exportJWK(privateKey) };
}

/** The independent wallet receives the offer's credential in the configuration it picks. */
async function receive(offerUri: string, configurationId: string, pin?: string) {
  const holder = await holderKey();
  const client = independentWallet([holder]);
  const credentialOffer = await client.resolveCredentialOffer(offerUri);
  const issuerMetadata = await client.resolveIssuerMetadata(credentialOffer.credential_issuer);
  const { accessTokenResponse } = await client.retrievePreAuthorizedCodeAccessTokenFromOffer({
    credentialOffer,
    issuerMetadata,
    txCode: pin,
  });
  const { c_nonce } = await client.requestNonce({ issuerMetadata });
  const { jwt } = await client.createCredentialRequestJwtProof({
    issuerMetadata,
    credentialConfigurationId: configurationId,
    nonce: c_nonce,
    signer: { method: 'jwk', alg: 'ES256', publicJwk: holder.publicJwk as never },
  });
  const { credentialResponse } = await client.retrieveCredentials({
    issuerMetadata,
    accessToken: accessTokenResponse.access_token,
    credentialConfigurationId: configurationId,
    proofs: { jwt: [jwt] },
  });
  return {
    credential: (credentialResponse.credentials?.[0] as { credential: string }).credential,
    holder,
    credentialOffer,
    issuerMetadata,
  };
}

/** @auth0/mdl's Verifier on a DeviceResponse that @auth0/mdl made from the IssuerSigned, against our CA as the IACA. */
async function verifyWithAuth0Verifier(issuerSigned: string, deviceKey: JWK, elements: string[]) {
  const handover = { clientId: 'x509_hash:test', nonce: 'n-1', responseUri: 'https://rp.example/response' };
  const deviceResponse = await presentWithAuth0({
    issuerSigned,
    doctype: DOCTYPE,
    namespace: NAMESPACE,
    elements,
    deviceKey,
    ...handover,
  });
  const mdoc = await new Verifier([ca.certificate]).verify(Buffer.from(deviceResponse, 'base64url'), {
    encodedSessionTranscript: oid4vpSessionTranscriptBytes(handover),
  });
  const [document] = mdoc.documents;
  return { document, claims: document.getIssuerNameSpace(NAMESPACE) };
}

describe('mso_mdoc issuance', () => {
  it('publishes an mso_mdoc configuration beside the SD-JWT VC one (OpenID4VCI 1.0 Appendix A.2.2)', async () => {
    const metadata = (await (await fetch(`${running.baseUrl}/.well-known/openid-credential-issuer/wallet`)).json()) as {
      credential_configurations_supported: Record<string, Record<string, unknown>>;
    };
    const configurations = metadata.credential_configurations_supported;
    expect(Object.keys(configurations).sort()).toEqual([
      'EmployeeBadge',
      'EmployeeBadge.mso_mdoc',
      'MembershipCard',
      'Pass',
      'Pass.mso_mdoc',
    ]);
    expect(configurations.EmployeeBadge).toMatchObject({
      format: 'dc+sd-jwt',
      cryptographic_binding_methods_supported: ['jwk'],
    });
    expect(configurations['EmployeeBadge.mso_mdoc']).toMatchObject({
      format: 'mso_mdoc',
      doctype: DOCTYPE,
      scope: 'EmployeeBadge',
      cryptographic_binding_methods_supported: ['cose_key'],
      credential_signing_alg_values_supported: [-7, -9],
      proof_types_supported: { jwt: { proof_signing_alg_values_supported: ['ES256'] } },
    });
    const claims = (
      configurations['EmployeeBadge.mso_mdoc'].credential_metadata as { claims: Array<{ path: string[] }> }
    ).claims;
    expect(claims.map((c) => c.path)).toEqual([
      [NAMESPACE, 'FirstName'],
      [NAMESPACE, 'LastName'],
      [NAMESPACE, 'Email'],
    ]);
    // the provider's own location serves the same document
    const own = (await (
      await fetch(`${running.baseUrl}/wallet/.well-known/openid-credential-issuer`)
    ).json()) as typeof metadata;
    expect(own.credential_configurations_supported).toEqual(configurations);
  });

  it('an offer names both configurations; @openid4vc/openid4vci picks the mdoc (with a PIN), which @auth0/mdl verifies against the issuer CA', async () => {
    const o = await offer(running, { pin: '2468' });
    expect(o.parsed.credential_configuration_ids).toEqual(['EmployeeBadge', 'EmployeeBadge.mso_mdoc']);
    const { credential, holder } = await receive(o.offerUri, 'EmployeeBadge.mso_mdoc', '2468');
    expect(credential).toMatch(/^[A-Za-z0-9_-]+$/);
    const { document, claims } = await verifyWithAuth0Verifier(credential, holder.privateJwk, [
      'FirstName',
      'LastName',
      'Email',
    ]);
    expect(claims).toEqual(attributes);
    expect(document.docType).toBe(DOCTYPE);
    const mso = document.issuerSigned.issuerAuth.decodedPayload;
    // a day from issuance, not the offer's ExpiresAt (the type's validity): an mdoc carries no status, so it is
    // short-lived (ARF Annex 2 VCR_01, docs/decisions.md); the device key the proof's
    expect(mso.validityInfo.validUntil.getTime() - mso.validityInfo.validFrom.getTime()).toBe(86_400_000);
    expect(Math.abs(mso.validityInfo.validFrom.getTime() - Date.now())).toBeLessThan(60_000);
    const deviceKey = mso.deviceKeyInfo!.deviceKey as unknown as Map<number, unknown>;
    expect(Buffer.from(deviceKey.get(-2) as Uint8Array).toString('base64url')).toBe(holder.publicJwk.x);
    expect(Buffer.from(deviceKey.get(-3) as Uint8Array).toString('base64url')).toBe(holder.publicJwk.y);
    expect(await running.issuer.offerStatus(o.offerId, o.expiresAt)).toMatchObject({ status: 'done' });
  });

  it('without a PIN too, and the same offer then gives no second credential (SD-JWT VC refused)', async () => {
    const o = await offer(running);
    const { credential, holder } = await receive(o.offerUri, 'EmployeeBadge.mso_mdoc');
    expect((await verifyWithAuth0Verifier(credential, holder.privateJwk, ['LastName'])).claims).toEqual({
      LastName: 'Lovelace',
    });
    // one credential per offer: the token is still valid, the offer is spent
    const token = await tokenRequest(running.baseUrl, { 'pre-authorized_code': o.code });
    expect(token.status).toBe(400);
  });

  it("never valid beyond the offer's ExpiresAt (a type validity shorter than a day); what onIssued hears is the mdoc's", async () => {
    const heard: unknown[] = [];
    const own = await startIssuer({
      credentialTypes: [badge],
      documentSigners: { current: async () => key },
      onIssued: async (_offer, issued) => void heard.push(issued),
    });
    try {
      const credentialExpiresAt = new Date(Math.floor(Date.now() / 1000) * 1000 + 2 * 3_600_000);
      const o = await offer(own, { credentialExpiresAt });
      const { credential, holder } = await receive(o.offerUri, 'EmployeeBadge.mso_mdoc');
      const mso = (await verifyWithAuth0Verifier(credential, holder.privateJwk, ['LastName'])).document.issuerSigned
        .issuerAuth.decodedPayload;
      expect(mso.validityInfo.validUntil.getTime()).toBe(credentialExpiresAt.getTime());
      // the ID token's ExpiresAt is made from this (src/service/stepOutcomes.ts)
      expect(heard).toEqual([{ format: 'mso_mdoc', expiresAt: credentialExpiresAt.getTime() / 1000, count: 1 }]);
    } finally {
      await own.close();
    }
  });

  it('the same offer gives the SD-JWT VC when the wallet picks that configuration', async () => {
    const o = await offer(running);
    const { credential } = await receive(o.offerUri, 'EmployeeBadge');
    expect(credential.split('~').length).toBeGreaterThan(2);
  });

  it('attributes become elements of their ISO types: full-date, tdate, image bytes, number, boolean', async () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
    const o = await offer(running, {
      credentialType: 'Pass',
      attributes: {
        Photo: `data:image/png;base64,${png.toString('base64')}`,
        Born: '1815-12-10',
        Seen: '2026-01-02T03:04:05Z',
        Visits: 3,
        Premium: true,
      },
    });
    const { credential, holder } = await receive(o.offerUri, 'Pass.mso_mdoc');
    const handover = { clientId: 'x509_hash:test', nonce: 'n-9', responseUri: 'https://rp.example/response' };
    const deviceResponse = await presentWithAuth0({
      issuerSigned: credential,
      doctype: 'org.example.pass.1',
      namespace: 'org.example.pass.1',
      elements: ['Photo', 'Born', 'Seen', 'Visits', 'Premium'],
      deviceKey: holder.privateJwk,
      ...handover,
    });
    const mdoc = await new Verifier([ca.certificate]).verify(Buffer.from(deviceResponse, 'base64url'), {
      encodedSessionTranscript: oid4vpSessionTranscriptBytes(handover),
    });
    const elements = mdoc.documents[0].getIssuerNameSpace('org.example.pass.1');
    expect(Buffer.from(elements.Photo as Uint8Array)).toEqual(png);
    expect(String(elements.Born)).toBe('1815-12-10'); // @auth0/mdl's full-date
    expect((elements.Seen as Date).toISOString()).toBe('2026-01-02T03:04:05.000Z');
    expect(elements).toMatchObject({ Visits: 3, Premium: true });
  });

  it('a type without mdoc is offered as SD-JWT VC only', async () => {
    const o = await offer(running, {
      credentialType: 'MembershipCard',
      attributes: { MemberName: 'Mary', Since: '2020-01-01' },
    });
    expect(o.parsed.credential_configuration_ids).toEqual(['MembershipCard']);
  });
});

describe('mso_mdoc issuance: bad requests get OpenID4VCI errors', () => {
  async function tokenFor(o: Awaited<ReturnType<typeof offer>>) {
    const token = await tokenRequest(running.baseUrl, { 'pre-authorized_code': o.code });
    expect(token.status, JSON.stringify(token.body)).toBe(200);
    return token.body.access_token;
  }

  async function proofWith(key: Awaited<ReturnType<typeof holderKey>>, alg: string) {
    return new SignJWT({ nonce: await nonce(running.baseUrl) })
      .setProtectedHeader({ alg, typ: 'openid4vci-proof+jwt', jwk: key.publicJwk })
      .setAudience(`${running.baseUrl}/wallet`)
      .setIssuedAt()
      .sign(key.privateKey);
  }

  it('a proof key on another curve than P-256 (ES384) is invalid_proof, and the offer stays redeemable', async () => {
    const o = await offer(running);
    const accessToken = await tokenFor(o);
    const refused = await credentialRequest(
      running.baseUrl,
      accessToken,
      await proofWith(await holderKey('ES384'), 'ES384'),
      'EmployeeBadge.mso_mdoc',
    );
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: 'invalid_proof' });
    expect(refused.body.error_description).toMatch(/alg/);
    const issued = await credentialRequest(
      running.baseUrl,
      accessToken,
      await proofWith(await holderKey(), 'ES256'),
      'EmployeeBadge.mso_mdoc',
    );
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
  });

  it('an EdDSA proof (accepted for SD-JWT VCs) is invalid_proof for the mdoc configuration', async () => {
    const o = await offer(running);
    const accessToken = await tokenFor(o);
    const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const proof = await new SignJWT({ nonce: await nonce(running.baseUrl) })
      .setProtectedHeader({ alg: 'EdDSA', typ: 'openid4vci-proof+jwt', jwk: await exportJWK(publicKey) })
      .setAudience(`${running.baseUrl}/wallet`)
      .setIssuedAt()
      .sign(privateKey);
    const refused = await credentialRequest(running.baseUrl, accessToken, proof, 'EmployeeBadge.mso_mdoc');
    expect(refused).toMatchObject({ status: 400, body: { error: 'invalid_proof' } });
  });

  it("the mdoc configuration of another type than the offer's is credential_request_denied; an unknown one unknown_credential_configuration", async () => {
    const o = await offer(running, {
      credentialType: 'MembershipCard',
      attributes: { MemberName: 'Mary', Since: '2020-01-01' },
    });
    const accessToken = await tokenFor(o);
    const key = await holderKey();
    const other = await credentialRequest(
      running.baseUrl,
      accessToken,
      await proofWith(key, 'ES256'),
      'EmployeeBadge.mso_mdoc',
    );
    expect(other).toMatchObject({ status: 400, body: { error: 'credential_request_denied' } });
    const unknown = await credentialRequest(
      running.baseUrl,
      accessToken,
      await proofWith(key, 'ES256'),
      'MembershipCard.mso_mdoc',
    );
    expect(unknown).toMatchObject({ status: 400, body: { error: 'unknown_credential_configuration' } });
    // the offer is untouched: its own configuration still issues
    const issued = await credentialRequest(
      running.baseUrl,
      accessToken,
      await proofWith(key, 'ES256'),
      'MembershipCard',
    );
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
  });

  it('the holder key in the MSO is the one the proof named (thumbprints)', async () => {
    const o = await offer(running);
    const { credential, holder } = await receive(o.offerUri, 'EmployeeBadge.mso_mdoc');
    const { document } = await verifyWithAuth0Verifier(credential, holder.privateJwk, ['FirstName']);
    const deviceKey = document.issuerSigned.issuerAuth.decodedPayload.deviceKeyInfo!.deviceKey as unknown as Map<
      number,
      unknown
    >;
    const jwk = {
      kty: 'EC',
      crv: 'P-256',
      x: Buffer.from(deviceKey.get(-2) as Uint8Array).toString('base64url'),
      y: Buffer.from(deviceKey.get(-3) as Uint8Array).toString('base64url'),
    };
    expect(await calculateJwkThumbprint(jwk)).toBe(await calculateJwkThumbprint(holder.publicJwk));
  });
});
