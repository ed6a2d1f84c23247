import { createHash } from 'node:crypto';
import { calculateJwkThumbprint, type JWK } from 'jose';
import {
  DeviceAuth,
  DeviceAuthentication,
  DeviceMac,
  DeviceResponse,
  DeviceSignature,
  DeviceSigned,
  Document,
  IssuerNamespaces,
  IssuerSigned,
  IssuerSignedItem,
  ProtectedHeaders,
  SessionTranscript,
  UnprotectedHeaders,
} from '@owf/mdoc';
import { beforeAll, describe, expect, it } from 'vitest';
import { VerificationRefusal } from '../../../src/verification/errors.js';
import { mdocCredentialQuery } from '../../../src/verification/dcql.js';
import { MDOC_FORMAT } from '../../../src/rules/formats.js';
import {
  MDOC_DEVICE_AUTH_ALGS,
  MDOC_ISSUER_AUTH_ALGS,
  verifyMdocPresentation,
  type MdocExpectations,
} from '../../../src/verification/mdoc.js';
import { mdocContext } from '../../../src/verification/mdocContext.js';
import { presentMdoc } from '../../../src/wallet/mdoc.js';
import {
  createTestMdocIssuer,
  oid4vpSessionTranscriptBytes,
  presentWithAuth0,
  type TestMdocIssuer,
} from '../../helpers/mdoc.js';

// @auth0/mdl's full-date class (tag 1004), so that the test issuer encodes birth_date as ISO 18013-5 does
import { cborDecode, DateOnly } from '@auth0/mdl/lib/cbor/index.js';
import { keyPair } from '../../helpers/keys.js';

const DOCTYPE = 'org.iso.18013.5.1.mDL';
const NAMESPACE = 'org.iso.18013.5.1';
const HANDOVER = {
  clientId: 'x509_san_dns:verifier.example.com',
  nonce: 'n-0S6_WzA2Mj-nonce-of-this-request',
  responseUri: 'https://verifier.example.com/vp/response',
};
const CLAIMS = {
  given_name: 'Ada',
  family_name: 'Lovelace',
  birth_date: new DateOnly('1815-12-10'),
  issue_date: new Date('2024-01-02T03:04:05Z'),
  age_over_18: true,
  portrait: new Uint8Array([0xff, 0xd8, 0xff, 0xe0]),
  driving_privileges: [{ vehicle_category_code: 'B', issue_date: new DateOnly('2020-05-01') }],
};
const DAY = 86_400_000;

let issuer: TestMdocIssuer;
let stranger: TestMdocIssuer;
let holder: { privateJwk: JWK; publicJwk: JWK };
let issuerSigned: string;

beforeAll(async () => {
  issuer = await createTestMdocIssuer({ name: 'Example IACA' });
  stranger = await createTestMdocIssuer({ name: 'Unknown IACA' });
  holder = await keyPair();
  ({ issuerSigned } = await issuer.issue({
    doctype: DOCTYPE,
    namespace: NAMESPACE,
    claims: CLAIMS,
    deviceKey: holder.publicJwk,
  }));
});

const expectations = (overrides: Partial<MdocExpectations> = {}): MdocExpectations => ({
  doctype: DOCTYPE,
  namespace: NAMESPACE,
  ...HANDOVER,
  trustAnchors: [issuer.iacaDer],
  ...overrides,
});

/** the independent holder (@auth0/mdl) presenting `elements` of the test credential for HANDOVER */
const auth0 = (elements: string[], overrides: Partial<Parameters<typeof presentWithAuth0>[0]> = {}) =>
  presentWithAuth0({
    issuerSigned,
    doctype: DOCTYPE,
    namespace: NAMESPACE,
    elements,
    deviceKey: holder.privateJwk,
    ...HANDOVER,
    ...overrides,
  });

async function refusal(
  presentation: Promise<string> | string,
  expected: Partial<MdocExpectations> = {},
  ctx?: { now?: number },
): Promise<VerificationRefusal> {
  try {
    await verifyMdocPresentation(await presentation, expectations(expected), ctx);
  } catch (err) {
    if (err instanceof VerificationRefusal) {
      // descriptions name the rule, never a claim value
      for (const value of ['Ada', 'Lovelace', '1815']) expect(err.message).not.toContain(value);
      return err;
    }
    throw err;
  }
  throw new Error('the presentation was accepted');
}

const b64u = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
const decode = (deviceResponse: string) =>
  DeviceResponse.decode(new Uint8Array(Buffer.from(deviceResponse, 'base64url')));
/** a DeviceResponse with the given documents (and status), re-encoded by @owf/mdoc */
const responseWith = (documents: Document[], status = 0) =>
  b64u(DeviceResponse.createSimple({ documents, status }).encode());
const withDeviceAuth = (doc: Document, deviceAuth: DeviceAuth, docType = doc.docType) =>
  Document.create({
    docType,
    issuerSigned: doc.issuerSigned,
    deviceSigned: DeviceSigned.create({ deviceNamespaces: doc.deviceSigned.deviceNamespaces, deviceAuth }),
  });

describe('verifying an mdoc presentation (OpenID4VP 1.0 §B.2, ISO/IEC 18013-5 §9.3.1)', () => {
  it('accepts a DeviceResponse made by an independent holder (@auth0/mdl) and returns the disclosed elements as JSON', async () => {
    const verified = await verifyMdocPresentation(
      await auth0(['given_name', 'birth_date', 'issue_date', 'portrait', 'driving_privileges', 'age_over_18']),
      expectations(),
    );
    expect(verified).toEqual({
      issuer: 'C=NL, CN=Example IACA',
      documentSigner: 'C=NL, CN=Example IACA document signer',
      doctype: DOCTYPE,
      claims: {
        given_name: 'Ada',
        birth_date: '1815-12-10',
        issue_date: '2024-01-02T03:04:05Z',
        portrait: Buffer.from([0xff, 0xd8, 0xff, 0xe0]).toString('base64url'),
        driving_privileges: [{ vehicle_category_code: 'B', issue_date: '2020-05-01' }],
        age_over_18: true,
      },
      disclosed: ['given_name', 'birth_date', 'issue_date', 'portrait', 'driving_privileges', 'age_over_18'],
      holderJwk: { kty: 'EC', crv: 'P-256', x: holder.publicJwk.x, y: holder.publicJwk.y },
      holderKeyThumbprint: await calculateJwkThumbprint(holder.publicJwk),
      // how this service finds an mdoc it issued: the SHA-256 of the MSO as signed (COSE_Sign1 payload, RFC 9052 §4.2)
      msoDigest: createHash('sha256')
        .update((cborDecode(Buffer.from(issuerSigned, 'base64url')) as Map<string, Uint8Array[]>).get('issuerAuth')![2])
        .digest('base64url'),
    });
  });

  it('returns only what was disclosed (selective disclosure, ISO/IEC 18013-5 §8.3.2.1.2.2)', async () => {
    const verified = await verifyMdocPresentation(await auth0(['family_name']), expectations());
    expect(verified.claims).toEqual({ family_name: 'Lovelace' });
    expect(verified.disclosed).toEqual(['family_name']);
  });

  it('accepts a presentation bound to the encryption key when the response was encrypted (§B.2.6.1 jwkThumbprint)', async () => {
    const jwkThumbprint = new Uint8Array(32).fill(7);
    const verified = await verifyMdocPresentation(
      await auth0(['given_name'], { jwkThumbprint }),
      expectations({ jwkThumbprint }),
    );
    expect(verified.claims).toEqual({ given_name: 'Ada' });
  });

  it('accepts the dev wallet presentation (src/wallet/mdoc.ts)', async () => {
    const presentation = await presentMdoc(
      { issuerSigned, doctype: DOCTYPE, deviceKey: holder.privateJwk },
      { namespace: NAMESPACE, elements: ['family_name', 'age_over_18'] },
      HANDOVER,
    );
    const verified = await verifyMdocPresentation(presentation, expectations());
    expect(verified.claims).toEqual({ family_name: 'Lovelace', age_over_18: true });
    expect(verified.holderKeyThumbprint).toBe(await calculateJwkThumbprint(holder.publicJwk));
  });

  it.each(['ES384', 'ES512', 'EdDSA'])(
    'accepts device keys for %s (the algorithms announced in vp_formats_supported.mso_mdoc)',
    async (alg) => {
      const device = await keyPair(undefined, { alg });
      const issued = await issuer.issue({
        doctype: DOCTYPE,
        namespace: NAMESPACE,
        claims: { given_name: 'Ada' },
        deviceKey: device.publicJwk,
      });
      const presentation = await presentMdoc(
        { issuerSigned: issued.issuerSigned, doctype: DOCTYPE, deviceKey: device.privateJwk },
        { namespace: NAMESPACE, elements: ['given_name'] },
        HANDOVER,
      );
      const verified = await verifyMdocPresentation(presentation, expectations());
      expect(verified.holderKeyThumbprint).toBe(await calculateJwkThumbprint(device.publicJwk));
    },
  );

  it('announces COSE algorithm numbers it verifies (§B.2.4), ES256 (-7) among them', () => {
    expect(MDOC_FORMAT).toBe('mso_mdoc');
    expect(MDOC_ISSUER_AUTH_ALGS).toContain(-7);
    expect(MDOC_DEVICE_AUTH_ALGS).toContain(-7);
    expect([...MDOC_ISSUER_AUTH_ALGS, ...MDOC_DEVICE_AUTH_ALGS].every((alg) => [-7, -35, -36, -8].includes(alg))).toBe(
      true,
    );
  });

  it('computes the §B.2.6.1 SessionTranscript of the spec example (the library and the independent test helper alike)', async () => {
    const example = {
      clientId: 'x509_san_dns:example.com',
      nonce: 'exc7gBkxjx1rdc9udRrveKvSsJIq80avlXeLHhGwqtA',
      jwkThumbprint: new Uint8Array(
        Buffer.from('4283ec927ae0f208daaa2d026a814f2b22dca52cf85ffa8f3f8626c6bd669047', 'hex'),
      ),
      responseUri: 'https://example.com/response',
    };
    const expected =
      '83f6f682714f70656e494434565048616e646f7665725820048bc053c00442af9b8eed494cefdd9d95240d254b046b11b68013722aad38ac';
    expect(Buffer.from((await SessionTranscript.forOid4Vp(example, mdocContext)).encode()).toString('hex')).toBe(
      expected,
    );
    // the helper's bytes are SessionTranscriptBytes: #6.24(bstr .cbor SessionTranscript), d8 18 58 <len> <transcript>
    expect(Buffer.from(oid4vpSessionTranscriptBytes(example)).toString('hex')).toBe(
      `d81858${(expected.length / 2).toString(16)}${expected}`,
    );
  });

  describe('refuses', () => {
    it('an mdoc whose IACA is not a trust anchor (mdoc_issuer_not_trusted, with the chain reason)', async () => {
      const err = await refusal(auth0(['given_name']), { trustAnchors: [stranger.iacaDer] });
      expect(err.reason).toBe('mdoc_issuer_not_trusted');
      expect(err.message).toMatch(
        /document signer certificate is not trusted .*: the chain does not end at a trusted root/,
      );
    });

    it('an mdoc when no trust anchor is configured', async () => {
      const err = await refusal(auth0(['given_name']), { trustAnchors: [] });
      expect(err.reason).toBe('mdoc_issuer_not_trusted');
      expect(err.message).toMatch(/no trust anchor may vouch for this credential type as an mdoc/);
    });

    it('an element whose value was changed after issuance (mdoc_digest_mismatch)', async () => {
      const original = IssuerSigned.decode(new Uint8Array(Buffer.from(issuerSigned, 'base64url')));
      const items = original.getIssuerNamespace(NAMESPACE)!.map((item) =>
        item.elementIdentifier === 'family_name'
          ? IssuerSignedItem.fromOptions({
              digestId: item.digestId,
              random: item.random,
              elementIdentifier: 'family_name',
              elementValue: 'Babbage',
            })
          : item,
      );
      const tampered = IssuerSigned.create({
        issuerNamespaces: IssuerNamespaces.create({ issuerNamespaces: new Map([[NAMESPACE, items]]) }),
        issuerAuth: original.issuerAuth,
      });
      const err = await refusal(auth0(['family_name'], { issuerSigned: b64u(tampered.encode()) }));
      expect(err.reason).toBe('mdoc_digest_mismatch');
      expect(err.message).toBe(
        'a disclosed mdoc element does not match its digest in the MSO (ISO/IEC 18013-5 §9.3.1)',
      );
      expect(err.message).not.toContain('Babbage');
    });

    it.each([
      ['nonce', { nonce: 'another-nonce' }],
      ['client_id', { clientId: 'x509_san_dns:other.example.com' }],
      ['response_uri', { responseUri: 'https://verifier.example.com/vp/other' }],
      ['encryption key thumbprint', { jwkThumbprint: new Uint8Array(32).fill(1) }],
    ])(
      'a device signature over another %s (mdoc_device_signature_invalid, §B.2.6.1 SessionTranscript)',
      async (_, other) => {
        const err = await refusal(auth0(['given_name']), other);
        expect(err.reason).toBe('mdoc_device_signature_invalid');
        expect(err.message).toMatch(/device signature does not verify for this request/);
      },
    );

    it('an unencrypted-response signature when the response was encrypted, and the other way round', async () => {
      expect((await refusal(auth0(['given_name'], { jwkThumbprint: new Uint8Array(32) }))).reason).toBe(
        'mdoc_device_signature_invalid',
      );
      expect((await refusal(auth0(['given_name']), { jwkThumbprint: new Uint8Array(32) })).reason).toBe(
        'mdoc_device_signature_invalid',
      );
    });

    it('a device signature by another key than the MSO device key', async () => {
      const other = await keyPair();
      const err = await refusal(auth0(['given_name'], { deviceKey: other.privateJwk }));
      expect(err.reason).toBe('mdoc_device_signature_invalid');
    });

    it('a DeviceSignature with an attached payload, e.g. an old one replayed for another request (ISO/IEC 18013-5 §9.1.3.6)', async () => {
      // a genuine signature for HANDOVER, carried with its DeviceAuthentication attached, sent to a request with another nonce
      const [doc] = decode(await auth0(['given_name'])).documents!;
      const signature = doc.deviceSigned.deviceAuth.deviceSignature!;
      const sessionTranscript = await SessionTranscript.forOid4Vp(HANDOVER, mdocContext);
      const payload = DeviceAuthentication.create({
        sessionTranscript,
        docType: DOCTYPE,
        deviceNamespaces: doc.deviceSigned.deviceNamespaces,
      }).encode({ asDataItem: true });
      const attached = DeviceSignature.fromDecodedStructure({
        protected: signature.protectedHeaders,
        unprotected: signature.unprotectedHeaders,
        payload,
        signature: signature.signature,
      });
      const err = await refusal(responseWith([withDeviceAuth(doc, DeviceAuth.create({ deviceSignature: attached }))]), {
        nonce: 'another-nonce',
      });
      expect(err.reason).toBe('mdoc_device_signature_invalid');
      expect(err.message).toBe(
        'the mdoc DeviceSignature carries a payload; it must be detached (null, ISO/IEC 18013-5 §9.1.3.6)',
      );
    });

    it('a device MAC (mdoc_device_mac_unsupported: no reader key agreement in OpenID4VP)', async () => {
      const [doc] = decode(await auth0(['given_name'])).documents!;
      const deviceMac = DeviceMac.fromDecodedStructure({
        protectedHeaders: ProtectedHeaders.create({ protectedHeaders: new Map([[1, 5]]) }),
        unprotectedHeaders: UnprotectedHeaders.create({}),
        payload: null,
        tag: new Uint8Array(32),
      });
      const err = await refusal(responseWith([withDeviceAuth(doc, DeviceAuth.create({ deviceMac }))]));
      expect(err.reason).toBe('mdoc_device_mac_unsupported');
      expect(err.message).toMatch(/device MAC/);
    });

    it('a document of another doctype than the query asked for (mdoc_wrong_doctype)', async () => {
      const err = await refusal(auth0(['given_name']), { doctype: 'eu.europa.ec.eudi.pid.1' });
      expect(err.reason).toBe('mdoc_wrong_doctype');
      expect(err.message).toBe('the mdoc is not of the requested doctype eu.europa.ec.eudi.pid.1');
    });

    it('a Document relabelled with another doctype than its signed MSO (mdoc_wrong_doctype)', async () => {
      const [doc] = decode(await auth0(['given_name'])).documents!;
      const err = await refusal(
        responseWith([withDeviceAuth(doc, doc.deviceSigned.deviceAuth, 'eu.europa.ec.eudi.pid.1')]),
        { doctype: 'eu.europa.ec.eudi.pid.1' },
      );
      expect(err.reason).toBe('mdoc_wrong_doctype');
      expect(err.message).toMatch(/issuer-signed MSO is not of the requested doctype/);
    });

    it('an expired MSO (validityInfo.validUntil in the past: mdoc_expired)', async () => {
      const now = Date.now();
      const expired = await issuer.issue({
        doctype: DOCTYPE,
        namespace: NAMESPACE,
        claims: CLAIMS,
        deviceKey: holder.publicJwk,
        validFrom: new Date(now - 10 * DAY),
        validUntil: new Date(now - DAY),
      });
      const err = await refusal(auth0(['given_name'], { issuerSigned: expired.issuerSigned }));
      expect(err.reason).toBe('mdoc_expired');
      expect(err.message).toMatch(/validUntil/);
    });

    it('an MSO that is not valid yet (validityInfo.validFrom in the future: mdoc_not_yet_valid)', async () => {
      const now = Date.now();
      const future = await issuer.issue({
        doctype: DOCTYPE,
        namespace: NAMESPACE,
        claims: CLAIMS,
        deviceKey: holder.publicJwk,
        validFrom: new Date(now + DAY),
        validUntil: new Date(now + 10 * DAY),
      });
      const err = await refusal(auth0(['given_name'], { issuerSigned: future.issuerSigned }));
      expect(err.reason).toBe('mdoc_not_yet_valid');
      expect(err.message).toMatch(/validFrom/);
    });

    it('an MSO signed before its document signer certificate was valid (validityInfo.signed)', async () => {
      const now = Date.now();
      const early = await issuer.issue({
        doctype: DOCTYPE,
        namespace: NAMESPACE,
        claims: CLAIMS,
        deviceKey: holder.publicJwk,
        validFrom: new Date(now - 380 * DAY),
        validUntil: new Date(now + DAY),
      });
      const err = await refusal(auth0(['given_name'], { issuerSigned: early.issuerSigned }));
      expect(err.reason).toBe('mdoc_issuer_signature_invalid');
      expect(err.message).toMatch(/validityInfo\.signed/);
    });

    it('within the clock tolerance, an MSO that expired seconds ago is still accepted', async () => {
      const now = Date.now();
      const justExpired = await issuer.issue({
        doctype: DOCTYPE,
        namespace: NAMESPACE,
        claims: CLAIMS,
        deviceKey: holder.publicJwk,
        validFrom: new Date(now - DAY),
        validUntil: new Date(now - 10_000),
      });
      await expect(
        verifyMdocPresentation(await auth0(['given_name'], { issuerSigned: justExpired.issuerSigned }), expectations()),
      ).resolves.toMatchObject({ claims: { given_name: 'Ada' } });
      const err = await refusal(
        auth0(['given_name'], { issuerSigned: justExpired.issuerSigned }),
        {},
        { now: Math.floor(now / 1000) + 60 },
      );
      expect(err.reason).toBe('mdoc_expired');
    });

    it('a vp_token value that is not base64url', async () => {
      const err = await refusal('not base64url!');
      expect(err.reason).toBe('mdoc_invalid');
      expect(err.message).toBe('the mdoc presentation is not base64url without padding (OpenID4VP 1.0 §B.2.5)');
      expect((await refusal(`${await auth0(['given_name'])}==`)).reason).toBe('mdoc_invalid');
    });

    it.each([
      ['malformed CBOR', async () => b64u(Buffer.from([0xff, 0x00, 0x1c]))],
      ['CBOR that is no DeviceResponse', async () => b64u(Buffer.from([0xa1, 0x61, 0x61, 0x01]))],
      ['a DeviceResponse cut short', async () => (await auth0(['given_name'])).slice(0, 200)],
      [
        'a DeviceResponse with bytes after it',
        async () => b64u(Buffer.concat([Buffer.from(await auth0(['given_name']), 'base64url'), Buffer.from([0])])),
      ],
      ['deeply nested CBOR', async () => b64u(Buffer.alloc(100_000, 0x81))],
    ])('%s (mdoc_invalid)', async (_, presentation) => {
      const err = await refusal(presentation());
      expect(err.reason).toBe('mdoc_invalid');
      expect(err.message).toMatch(/^the mdoc presentation is not a CBOR DeviceResponse/);
    });

    it('a DeviceResponse with two documents (exactly one answers one Credential Query)', async () => {
      const [doc] = decode(await auth0(['given_name'])).documents!;
      const err = await refusal(responseWith([doc, doc]));
      expect(err.reason).toBe('mdoc_invalid');
      expect(err.message).toBe('the mdoc DeviceResponse holds 2 documents; exactly one is expected');
      expect((await refusal(responseWith([]))).message).toBe(
        'the mdoc DeviceResponse holds 0 documents; exactly one is expected',
      );
    });

    it('a DeviceResponse with an error status', async () => {
      const [doc] = decode(await auth0(['given_name'])).documents!;
      const err = await refusal(responseWith([doc], 10));
      expect(err.reason).toBe('mdoc_invalid');
      expect(err.message).toBe('the mdoc DeviceResponse has status 10, not 0 (OK)');
    });

    it('a presentation of more than 1 MiB', async () => {
      const err = await refusal('A'.repeat(1_400_000));
      expect(err.reason).toBe('vp_token_too_large');
      expect(err.message).toBe('the mdoc presentation exceeds 1048576 bytes');
    });
  });
});

describe('the mso_mdoc Credential Query (OpenID4VP 1.0 §6.1, §B.2.3)', () => {
  const mdoc = { doctype: DOCTYPE, namespace: NAMESPACE };

  it('asks for the doctype (§B.2.3 meta.doctype_value) and each element by [namespace, element], not to be retained (§B.2.3 intent_to_retain)', () => {
    expect(
      mdocCredentialQuery('mdl', mdoc, [
        { name: 'given_name', required: true },
        { name: 'age_over_18', required: false },
      ]),
    ).toEqual({
      id: 'mdl',
      format: 'mso_mdoc',
      meta: { doctype_value: DOCTYPE },
      claims: [
        { id: 'given_name', path: [NAMESPACE, 'given_name'], intent_to_retain: false },
        { id: 'age_over_18', path: [NAMESPACE, 'age_over_18'], intent_to_retain: false },
      ],
      claim_sets: [['given_name', 'age_over_18'], ['given_name']],
    });
  });

  it('leaves claim_sets out when every element is required (§6.4.1: then all claims are requested)', () => {
    expect(
      mdocCredentialQuery('mdl', mdoc, [
        { name: 'given_name', required: true },
        { name: 'family_name', required: true },
      ]),
    ).not.toHaveProperty('claim_sets');
  });

  it('offers each element alone when none is required, so that an empty presentation never satisfies it (§6.4.1)', () => {
    expect(
      mdocCredentialQuery('mdl', mdoc, [
        { name: 'given_name', required: false },
        { name: 'family_name', required: false },
      ]).claim_sets,
    ).toEqual([['given_name', 'family_name'], ['given_name'], ['family_name']]);
  });

  it('names the trust anchors by key identifier when there are some (§6.1.1.1 trusted_authorities aki)', () => {
    const claims = [{ name: 'given_name', required: true }];
    expect(mdocCredentialQuery('mdl', mdoc, claims, ['s9tIpPmhxdiuNkHMEWNpYim8S8Y']).trusted_authorities).toEqual([
      { type: 'aki', values: ['s9tIpPmhxdiuNkHMEWNpYim8S8Y'] },
    ]);
    expect(mdocCredentialQuery('mdl', mdoc, claims, [])).not.toHaveProperty('trusted_authorities');
    expect(mdocCredentialQuery('mdl', mdoc, claims)).not.toHaveProperty('trusted_authorities');
  });
});
