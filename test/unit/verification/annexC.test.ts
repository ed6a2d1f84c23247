/**
 * ISO/IEC 18013-7:2025 Annex C (`org-iso-mdoc`, issue 48) as pure functions, against walt.id's deterministic
 * vector (test/fixtures/annex-c, Apache-2.0) and against an independent holder's reading (@auth0/mdl's CBOR,
 * @hpke/core, node:crypto; test/helpers/annexCHolder.ts).
 */
import { createECDH, createHash, generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cborDecode, cborEncode } from '@auth0/mdl/lib/cbor/index.js';
import type { JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import {
  ANNEX_C_PROTOCOL,
  annexCDocRequests,
  annexCRequest,
  DEVICE_REQUEST_VERSION,
  encryptionInfo,
  hpkeInfo,
  sessionTranscript,
  type AnnexCKey,
} from '../../../src/verification/annexC.js';
import {
  ENCRYPTED_RESPONSE_LIMIT,
  openResponse,
  readEncryptedResponse,
} from '../../../src/verification/annexCAnswer.js';
import { dcqlQueryFor } from '../../../src/verification/dcql.js';
import { VerificationRefusal } from '../../../src/verification/errors.js';
import { coseKeyOfJwk, mdocContext } from '../../../src/verification/mdocContext.js';
import { annexCTranscript, readAnnexCRequest, sealAnnexC } from '../../helpers/annexCHolder.js';
import { makeCert } from '../../helpers/pki.js';
import type { CredentialType } from '../../../src/config/schema.js';

interface Vector {
  origin: string;
  encryptionInfoB64: string;
  encryptedResponseB64: string;
  recipientPrivateKeyHex: string;
  expected: { sessionTranscriptCborSha256Hex: string; deviceResponseCborSha256Hex: string; docType: string };
}
const vector = JSON.parse(
  readFileSync(join(import.meta.dirname, '../../fixtures/annex-c/ANNEXC-DETERMINISTIC-001.json'), 'utf8'),
) as Vector;
const sha256hex = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** The vector's recipient key as the request keeps one: its nonce (read from its EncryptionInfo) and the JWK. */
function vectorKey(): AnnexCKey {
  const ecdh = createECDH('prime256v1');
  const d = Buffer.from(vector.recipientPrivateKeyHex, 'hex');
  ecdh.setPrivateKey(d);
  const point = ecdh.getPublicKey();
  const info = cborDecode(Buffer.from(vector.encryptionInfoB64, 'base64url')) as [string, Map<string, Uint8Array>];
  return {
    nonce: Buffer.from(info[1].get('nonce')!).toString('base64url'),
    recipientKey: {
      kty: 'EC',
      crv: 'P-256',
      x: point.subarray(1, 33).toString('base64url'),
      y: point.subarray(33).toString('base64url'),
      d: d.toString('base64url'),
    },
  };
}

async function refusal(p: Promise<unknown> | (() => unknown)): Promise<VerificationRefusal> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (err) {
    if (err instanceof VerificationRefusal) return err;
    throw err;
  }
  throw new Error('not refused');
}

describe('walt.id ANNEXC-DETERMINISTIC-001 (issue 48, Tests)', () => {
  it('the SessionTranscript: SHA-256 of its CBOR is the vector’s', () => {
    const transcript = sessionTranscript(vector.encryptionInfoB64, vector.origin);
    expect(sha256hex(hpkeInfo(transcript))).toBe(vector.expected.sessionTranscriptCborSha256Hex);
  });

  it('EncryptionInfo: our encoding of its nonce and recipient key is the vector’s, byte for byte', () => {
    expect(encryptionInfo(vectorKey())).toBe(vector.encryptionInfoB64);
  });

  it('opens the EncryptedResponse with the recipient key: the DeviceResponse the vector names', async () => {
    const key = vectorKey();
    const transcript = sessionTranscript(encryptionInfo(key), vector.origin);
    const plaintext = await openResponse(key, readEncryptedResponse(vector.encryptedResponseB64), hpkeInfo(transcript));
    expect(sha256hex(plaintext)).toBe(vector.expected.deviceResponseCborSha256Hex);
    const response = cborDecode(plaintext) as Map<string, unknown>;
    expect(response.get('version')).toBe('1.0');
    expect(response.get('status')).toBe(0);
  });

  it('the same answer for another origin does not open (the transcript binds the origin)', async () => {
    const key = vectorKey();
    const transcript = sessionTranscript(encryptionInfo(key), 'https://evil.example');
    const err = await refusal(
      openResponse(key, readEncryptedResponse(vector.encryptedResponseB64), hpkeInfo(transcript)),
    );
    expect(err.reason).toBe('malformed_response');
    expect(err.message).toMatch(/does not open with this request's key and SessionTranscript/);
  });
});

describe('the EncryptedResponse is read strictly (issue 48: truncated, oversized, wrong suite)', () => {
  const bytes = Buffer.from(vector.encryptedResponseB64, 'base64url');
  const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64url');

  it('truncated CBOR', async () => {
    const err = await refusal(() => readEncryptedResponse(b64(bytes.subarray(0, bytes.length - 5))));
    expect(err.message).toMatch(/not one well-formed CBOR item/);
  });

  it('bytes after the item', async () => {
    const err = await refusal(() => readEncryptedResponse(b64(Buffer.concat([bytes, Buffer.from([0x00])]))));
    expect(err.message).toMatch(/not one well-formed CBOR item/);
  });

  it('oversized: refused before it is decoded', async () => {
    const err = await refusal(() =>
      readEncryptedResponse('A'.repeat(Math.ceil((ENCRYPTED_RESPONSE_LIMIT * 4) / 3) + 4)),
    );
    expect(err.reason).toBe('vp_token_too_large');
  });

  it('not base64url, not the Annex C shape, other members', async () => {
    expect((await refusal(() => readEncryptedResponse('a+b/'))).message).toMatch(/base64url/);
    expect((await refusal(() => readEncryptedResponse(b64(cborEncode(['other', new Map()]))))).message).toMatch(
      /\["dcapi", \{enc, cipherText\}\]/,
    );
    const extra = cborEncode([
      'dcapi',
      new Map<string, unknown>([
        ['enc', new Uint8Array(65).fill(4)],
        ['cipherText', new Uint8Array(20)],
        ['x', 1],
      ]),
    ]);
    expect((await refusal(() => readEncryptedResponse(b64(extra)))).message).toMatch(/other members/);
    expect((await refusal(() => readEncryptedResponse(undefined))).message).toMatch(/no EncryptedResponse/);
  });

  it('another KEM (an X25519 enc of 32 bytes): the suite is named', async () => {
    const x25519 = cborEncode([
      'dcapi',
      new Map<string, unknown>([
        ['enc', new Uint8Array(32).fill(9)],
        ['cipherText', new Uint8Array(40)],
      ]),
    ]);
    const err = await refusal(() => readEncryptedResponse(b64(x25519)));
    expect(err.message).toMatch(/DHKEM\(P-256, HKDF-SHA256\), HKDF-SHA256, AES-128-GCM/);
  });
});

const types: CredentialType[] = [
  {
    name: 'DrivingLicence',
    mdoc: { doctype: 'org.iso.18013.5.1.mDL', namespace: 'org.iso.18013.5.1' },
    attributes: { family_name: { type: 'string', required: true }, age_over_18: { type: 'boolean', required: false } },
  } as unknown as CredentialType,
  {
    name: 'EmployeeBadge',
    attributes: { FirstName: { type: 'string', required: true } },
  } as unknown as CredentialType,
];

describe('which requests have an Annex C entry (issue 48: every credential has an mdoc form)', () => {
  it('a type with an mdoc form: its mdoc query, every element (required and optional)', () => {
    expect(annexCDocRequests(dcqlQueryFor([types[0]], 'https://vc.example'))).toEqual([
      {
        queryId: 'DrivingLicence-mdoc',
        doctype: 'org.iso.18013.5.1.mDL',
        namespaces: { 'org.iso.18013.5.1': ['family_name', 'age_over_18'] },
      },
    ]);
  });

  it('mixed: an SD-JWT VC only type beside it leaves no Annex C entry', () => {
    expect(annexCDocRequests(dcqlQueryFor(types, 'https://vc.example'))).toBeUndefined();
    expect(annexCDocRequests(dcqlQueryFor([types[1]], 'https://vc.example'))).toBeUndefined();
  });
});

describe('the org-iso-mdoc request, as an independent holder reads it', () => {
  it('DeviceRequest 1.0, intentToRetain false, readerAuth over this origin and EncryptionInfo; a fresh P-256 key', async () => {
    const reader = await makeCert({ subject: 'CN=Test reader' });
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = privateKey.export({ format: 'jwk' }) as JWK;
    const key: AnnexCKey = { nonce: Buffer.alloc(16, 7).toString('base64url'), recipientKey: jwk };
    const docs = annexCDocRequests(dcqlQueryFor([types[0]], 'https://vc.example'))!;
    const readerJwk = reader.privateJwk;
    const entry = await annexCRequest(
      {
        docs,
        key,
        origin: 'https://vc.example',
        signer: { x5chain: [reader.der], key: coseKeyOfJwk(readerJwk, -7), algorithm: -7 },
      },
      mdocContext,
    );
    expect(entry.protocol).toBe(ANNEX_C_PROTOCOL);
    const read = readAnnexCRequest(entry, 'https://vc.example');
    expect(read.version).toBe(DEVICE_REQUEST_VERSION);
    expect(read.nonce.length).toBeGreaterThanOrEqual(16);
    expect(Buffer.from(read.recipient.x).toString('base64url')).toBe(jwk.x);
    const [doc] = read.docs;
    expect(doc.doctype).toBe('org.iso.18013.5.1.mDL');
    expect([...doc.namespaces.get('org.iso.18013.5.1')!]).toEqual([
      ['family_name', false],
      ['age_over_18', false],
    ]);
    expect(doc.reader?.subject).toBe('CN=Test reader');
    // the reader signature binds the origin
    expect(() => readAnnexCRequest(entry, 'https://evil.example')).toThrow(/readerAuth does not verify/);
    // our transcript is the holder's
    expect(Buffer.from(hpkeInfo(sessionTranscript(read.encryptionInfo, 'https://vc.example')))).toEqual(
      Buffer.from(cborEncode(annexCTranscript(read.encryptionInfo, 'https://vc.example'))),
    );
    // and what @hpke/core seals to the request's key opens here
    const info = hpkeInfo(sessionTranscript(read.encryptionInfo, 'https://vc.example'));
    const sealed = await sealAnnexC(read, new Uint8Array([0xa0]), info);
    expect(await openResponse(key, readEncryptedResponse(sealed), info)).toEqual(new Uint8Array([0xa0]));
  });

  it('without a reader certificate the DeviceRequest is unsigned', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const key: AnnexCKey = {
      nonce: Buffer.alloc(16, 1).toString('base64url'),
      recipientKey: privateKey.export({ format: 'jwk' }) as JWK,
    };
    const docs = annexCDocRequests(dcqlQueryFor([types[0]], 'https://vc.example'))!;
    const entry = await annexCRequest({ docs, key, origin: 'https://vc.example' }, mdocContext);
    expect(readAnnexCRequest(entry, 'https://vc.example').docs[0].reader).toBeUndefined();
  });
});
