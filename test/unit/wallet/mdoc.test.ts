import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { presentMdoc, readIssuerSigned, type HeldMdoc } from '../../../src/wallet/mdoc.js';
import { createTestMdocIssuer, verifyWithAuth0, type TestMdocIssuer } from '../../helpers/mdoc.js';

// @auth0/mdl's full-date class (tag 1004), so that the test issuer encodes birth_date as ISO 18013-5 does
import { DateOnly } from '@auth0/mdl/lib/cbor/index.js';

/**
 * The dev wallet's mdoc holder side, checked by an independent verifier: @auth0/mdl's `Verifier` with the
 * OpenID4VP 1.0 §B.2.6.1 SessionTranscript computed in test/helpers/mdoc.ts (no code shared with src/).
 */

const DOCTYPE = 'org.iso.18013.5.1.mDL';
const NAMESPACE = 'org.iso.18013.5.1';
const HANDOVER = {
  clientId: 'x509_san_dns:verifier.example.com',
  nonce: 'n-0S6_WzA2Mj',
  responseUri: 'https://verifier.example.com/vp/response',
};

let issuer: TestMdocIssuer;
let held: HeldMdoc;
let publicJwk: JWK;
let validUntil: Date;

beforeAll(async () => {
  issuer = await createTestMdocIssuer();
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  publicJwk = await exportJWK(publicKey);
  validUntil = new Date(Math.floor(Date.now() / 1000) * 1000 + 30 * 86_400_000);
  const { issuerSigned } = await issuer.issue({
    doctype: DOCTYPE,
    namespace: NAMESPACE,
    claims: {
      given_name: 'Ada',
      family_name: 'Lovelace',
      birth_date: new DateOnly('1815-12-10'),
      age_over_18: true,
      portrait: new Uint8Array([1, 2, 3]),
    },
    deviceKey: publicJwk,
    validUntil,
  });
  held = { issuerSigned, doctype: DOCTYPE, deviceKey: await exportJWK(privateKey) };
});

describe('reading a held mdoc', () => {
  it('lists its namespaces and elements as JSON values, its MSO doctype and validUntil', () => {
    expect(readIssuerSigned(held.issuerSigned)).toEqual({
      namespaces: {
        [NAMESPACE]: {
          given_name: 'Ada',
          family_name: 'Lovelace',
          birth_date: '1815-12-10',
          age_over_18: true,
          portrait: 'AQID',
        },
      },
      doctype: DOCTYPE,
      validUntil: validUntil.toISOString(),
    });
  });

  it('throws a readable error for what is not an IssuerSigned', () => {
    expect(() => readIssuerSigned('not base64url!')).toThrow('the IssuerSigned is not base64url');
    expect(() => readIssuerSigned(Buffer.from('hello').toString('base64url'))).toThrow(/is not a CBOR IssuerSigned/);
  });
});

describe('presenting a held mdoc (OpenID4VP 1.0 §B.2)', () => {
  it('makes a DeviceResponse that @auth0/mdl verifies for the same SessionTranscript, disclosing only the chosen elements', async () => {
    const presentation = await presentMdoc(
      held,
      { namespace: NAMESPACE, elements: ['family_name', 'birth_date'] },
      HANDOVER,
    );
    expect(presentation).toMatch(/^[A-Za-z0-9_-]+$/);
    const disclosed = await verifyWithAuth0(presentation, {
      iacaPem: issuer.iacaPem,
      namespace: NAMESPACE,
      ...HANDOVER,
    });
    expect(Object.keys(disclosed)).toEqual(['family_name', 'birth_date']);
    expect(disclosed.family_name).toBe('Lovelace');
    expect((disclosed.birth_date as Date).toISOString()).toBe('1815-12-10');
  });

  it('binds the presentation to the encryption key thumbprint when the response is encrypted (§B.2.6.1)', async () => {
    const jwkThumbprint = new Uint8Array(32).fill(9);
    const presentation = await presentMdoc(
      held,
      { namespace: NAMESPACE, elements: ['given_name'] },
      { ...HANDOVER, jwkThumbprint },
    );
    await expect(
      verifyWithAuth0(presentation, { iacaPem: issuer.iacaPem, namespace: NAMESPACE, ...HANDOVER, jwkThumbprint }),
    ).resolves.toEqual({ given_name: 'Ada' });
    // an independent verifier computing the transcript without the thumbprint (or with another nonce) refuses it
    await expect(
      verifyWithAuth0(presentation, { iacaPem: issuer.iacaPem, namespace: NAMESPACE, ...HANDOVER }),
    ).rejects.toThrow(/Device signature must be valid/);
    await expect(
      verifyWithAuth0(presentation, {
        iacaPem: issuer.iacaPem,
        namespace: NAMESPACE,
        ...HANDOVER,
        jwkThumbprint,
        nonce: 'other',
      }),
    ).rejects.toThrow(/Device signature must be valid/);
  });

  it('refuses to present an element the mdoc does not hold', async () => {
    await expect(
      presentMdoc(held, { namespace: NAMESPACE, elements: ['given_name', 'resident_city'] }, HANDOVER),
    ).rejects.toThrow(`the mdoc has no resident_city in ${NAMESPACE}`);
  });

  it('refuses a device key other than the one the MSO names, and a doctype other than the MSO one', async () => {
    const other = await exportJWK((await generateKeyPair('ES256', { extractable: true })).privateKey);
    await expect(
      presentMdoc({ ...held, deviceKey: other }, { namespace: NAMESPACE, elements: ['given_name'] }, HANDOVER),
    ).rejects.toThrow(/not the one the mdoc is bound to/);
    await expect(
      presentMdoc(
        { ...held, doctype: 'eu.europa.ec.eudi.pid.1' },
        { namespace: NAMESPACE, elements: ['given_name'] },
        HANDOVER,
      ),
    ).rejects.toThrow(`the mdoc is of doctype ${DOCTYPE}, not eu.europa.ec.eudi.pid.1`);
  });
});
