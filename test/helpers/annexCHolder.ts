import { createHash, verify, X509Certificate } from 'node:crypto';
import { Aes128Gcm, CipherSuite, DhkemP256HkdfSha256, HkdfSha256 } from '@hpke/core';
import { DataItem } from '@auth0/mdl';
// @auth0/mdl exports no CBOR codec; its own (cbor-x with its DataItem) is in lib/cbor
import { cborDecode, cborEncode } from '@auth0/mdl/lib/cbor/index.js';
import type { DigitalAnswer, DigitalRequest } from './dcApiHolder.js';

/**
 * An independent ISO/IEC 18013-7 Annex C holder (`org-iso-mdoc`), sharing no code with src/: it reads the
 * request's EncryptionInfo and DeviceRequest with @auth0/mdl's CBOR codec, computes the `dcapi`
 * SessionTranscript from the spec text, checks the reader's signature (`readerAuth`) with node:crypto, has
 * the caller build the DeviceResponse over that transcript (@auth0/mdl, test/helpers/mdoc.ts), and seals it
 * with @hpke/core (DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-128-GCM; info the CBOR SessionTranscript).
 */

export const ANNEX_C = 'org-iso-mdoc';

export interface AnnexCRequestRead {
  encryptionInfo: string;
  nonce: Uint8Array;
  recipient: { x: Uint8Array; y: Uint8Array };
  version: string;
  /** per DocRequest: its doctype, namespace -> element -> intentToRetain, and the reader certificate when signed */
  docs: Array<{ doctype: string; namespaces: Map<string, Map<string, boolean>>; reader?: X509Certificate }>;
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest();
const b64u = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');

/** SessionTranscript = [null, null, ["dcapi", SHA-256(CBOR([base64url EncryptionInfo, origin]))]] */
export const annexCTranscript = (encryptionInfo: string, origin: string): unknown[] => [
  null,
  null,
  ['dcapi', sha256(cborEncode([encryptionInfo, origin]))],
];

/** The transcript as @auth0/mdl takes it: SessionTranscriptBytes (#6.24(bstr .cbor SessionTranscript)). */
export const sessionTranscriptBytes = (transcript: unknown[]): Uint8Array =>
  new Uint8Array(cborEncode(DataItem.fromData(transcript)));

/** A COSE_Sign1 as cbor-x decodes it: untagged, or under tag 18. */
function sign1Parts(value: unknown): [Uint8Array, Map<number, unknown>, unknown, Uint8Array] {
  const parts = (value as { tag?: number; value?: unknown }).tag === 18 ? (value as { value: unknown }).value : value;
  if (!Array.isArray(parts) || parts.length !== 4) throw new Error('readerAuth is not a COSE_Sign1');
  return parts as [Uint8Array, Map<number, unknown>, unknown, Uint8Array];
}

/**
 * Reads the `org-iso-mdoc` entry for `origin` and checks each readerAuth: ES256 over ReaderAuthenticationBytes
 * (["ReaderAuthentication", SessionTranscript, ItemsRequestBytes]) with a detached payload, by the leaf of its
 * x5chain.
 */
export function readAnnexCRequest(entry: DigitalRequest, origin: string): AnnexCRequestRead {
  const { deviceRequest, encryptionInfo } = entry.data as { deviceRequest: string; encryptionInfo: string };
  const info = cborDecode(Buffer.from(encryptionInfo, 'base64url')) as [string, Map<string, unknown>];
  if (info[0] !== 'dcapi') throw new Error('EncryptionInfo is not dcapi');
  const nonce = info[1].get('nonce') as Uint8Array;
  const key = info[1].get('recipientPublicKey') as Map<number, unknown>;
  if (key.get(1) !== 2 || key.get(-1) !== 1) throw new Error('recipientPublicKey is not an EC2 P-256 COSE_Key');
  const transcript = annexCTranscript(encryptionInfo, origin);
  const request = cborDecode(Buffer.from(deviceRequest, 'base64url')) as Map<string, unknown>;
  const docs = (request.get('docRequests') as Array<Map<string, unknown>>).map((docRequest) => {
    const items = docRequest.get('itemsRequest') as DataItem<Map<string, unknown>>;
    const doc = {
      doctype: items.data.get('docType') as string,
      namespaces: items.data.get('nameSpaces') as Map<string, Map<string, boolean>>,
    };
    if (!docRequest.has('readerAuth')) return doc;
    const [protectedBytes, unprotected, payload, signature] = sign1Parts(docRequest.get('readerAuth'));
    if (payload !== null) throw new Error('readerAuth carries its payload; it must be detached');
    const header = cborDecode(protectedBytes) as Map<number, unknown>;
    if (header.get(1) !== -7) throw new Error('readerAuth is not ES256');
    const x5chain = unprotected.get(33) ?? header.get(33);
    const leaf = new X509Certificate(Buffer.from((Array.isArray(x5chain) ? x5chain[0] : x5chain) as Uint8Array));
    const readerAuthentication = cborEncode(DataItem.fromData(['ReaderAuthentication', transcript, items]));
    const toBeSigned = cborEncode(['Signature1', protectedBytes, new Uint8Array(0), readerAuthentication]);
    const ok = verify('sha256', toBeSigned, { key: leaf.publicKey, dsaEncoding: 'ieee-p1363' }, signature);
    if (!ok) throw new Error('readerAuth does not verify over this origin and EncryptionInfo');
    return { ...doc, reader: leaf };
  });
  return {
    encryptionInfo,
    nonce,
    recipient: { x: key.get(-2) as Uint8Array, y: key.get(-3) as Uint8Array },
    version: request.get('version') as string,
    docs,
  };
}

const suite = () => new CipherSuite({ kem: new DhkemP256HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes128Gcm() });

/** HPKE-seals `deviceResponse` to the request's key with `info`, as `EncryptedResponse = ["dcapi", {enc, cipherText}]`, base64url. */
export async function sealAnnexC(
  read: Pick<AnnexCRequestRead, 'recipient'>,
  deviceResponse: Uint8Array,
  info: Uint8Array,
): Promise<string> {
  const s = suite();
  const recipientPublicKey = await s.kem.deserializePublicKey(
    new Uint8Array([0x04, ...read.recipient.x, ...read.recipient.y]),
  );
  const sender = await s.createSenderContext({ recipientPublicKey, info });
  const cipherText = new Uint8Array(await sender.seal(deviceResponse, new Uint8Array(0)));
  return b64u(
    cborEncode([
      'dcapi',
      new Map<string, unknown>([
        ['enc', new Uint8Array(sender.enc)],
        ['cipherText', cipherText],
      ]),
    ]),
  );
}

/**
 * The holder's answer through the Digital Credentials API: the `org-iso-mdoc` entry read for `origin` (the one
 * the platform asserts), the DeviceResponse `present` makes over SessionTranscriptBytes (by default the
 * transcript of that origin; `transcriptOrigin` signs over another's), sealed with the CBOR transcript as
 * `info` (`sealOrigin`: another's).
 */
export async function holderAnswersAnnexC(
  requests: DigitalRequest[],
  o: {
    origin: string;
    present: (read: AnnexCRequestRead, sessionTranscriptBytes: Uint8Array) => Promise<string>;
    transcriptOrigin?: string;
    sealOrigin?: string;
  },
): Promise<DigitalAnswer & { read: AnnexCRequestRead }> {
  const entry = requests.find((r) => r.protocol === ANNEX_C);
  if (!entry) throw new Error(`no ${ANNEX_C} request among ${requests.map((r) => r.protocol).join(', ')}`);
  const read = readAnnexCRequest(entry, o.origin);
  const signed = annexCTranscript(read.encryptionInfo, o.transcriptOrigin ?? o.origin);
  const deviceResponse = Buffer.from(await o.present(read, sessionTranscriptBytes(signed)), 'base64url');
  const sealed = annexCTranscript(read.encryptionInfo, o.sealOrigin ?? o.origin);
  const response = await sealAnnexC(read, deviceResponse, new Uint8Array(cborEncode(sealed)));
  return { protocol: ANNEX_C, data: { response }, read };
}
