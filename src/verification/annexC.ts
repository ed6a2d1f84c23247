import { createHash } from 'node:crypto';
import {
  cborEncode,
  DataItem,
  DeviceRequest,
  DocRequest,
  Header,
  ItemsRequest,
  ReaderAuth,
  type CoseKey,
  type MdocContext,
} from '@owf/mdoc';
import type { JWK } from 'jose';
import { MDOC_FORMAT } from '../rules/formats.js';
import type { DcqlQuery } from './dcql.js';

/**
 * ISO/IEC 18013-7:2025 Annex C: an mdoc request over the W3C Digital Credentials API (protocol
 * `org-iso-mdoc`), as Safari and Apple Wallet speak it. The structures as pure functions (CBOR by @owf/mdoc's
 * codec): the request's `EncryptionInfo` and `DeviceRequest`, and the `dcapi` SessionTranscript both sides
 * derive from them and the origin. The answer: src/verification/annexCAnswer.ts.
 */

export const ANNEX_C_PROTOCOL = 'org-iso-mdoc';
/** ISO/IEC 18013-5 §8.3.2.1.2.1: the DeviceRequest version without DeviceRequestInfo or readerAuthAll */
export const DEVICE_REQUEST_VERSION = '1.0';
/** Annex C: the EncryptionInfo nonce is at least 16 bytes */
export const ANNEX_C_NONCE_BYTES = 16;

/** What a request keeps for its Annex C entry: the nonce (base64url) and its own P-256 key, private part included. */
export interface AnnexCKey {
  nonce: string;
  recipientKey: JWK;
}

const b64uBytes = (value: string | undefined): Uint8Array => new Uint8Array(Buffer.from(value ?? '', 'base64url'));
const sha256 = (bytes: Uint8Array) => new Uint8Array(createHash('sha256').update(bytes).digest());

/** RFC 9052 §7, RFC 9053 §7.1.1: a P-256 public key as a COSE_Key (kty EC2, crv P-256, x, y). */
function coseKeyOfP256(jwk: JWK): Map<number, unknown> {
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || !jwk.x || !jwk.y)
    throw new TypeError('the Annex C recipient key must be an EC P-256 key');
  return new Map<number, unknown>([
    [1, 2],
    [-1, 1],
    [-2, b64uBytes(jwk.x)],
    [-3, b64uBytes(jwk.y)],
  ]);
}

/**
 * `EncryptionInfo = ["dcapi", {"nonce": bstr, "recipientPublicKey": COSE_Key}]`, CBOR, base64url without
 * padding, as the request carries it (and as the SessionTranscript hashes it).
 */
export function encryptionInfo(key: AnnexCKey): string {
  const info = cborEncode([
    'dcapi',
    new Map<string, unknown>([
      ['nonce', b64uBytes(key.nonce)],
      ['recipientPublicKey', coseKeyOfP256(key.recipientKey)],
    ]),
  ]);
  return Buffer.from(info).toString('base64url');
}

/**
 * `SessionTranscript = [null, null, ["dcapi", SHA-256(CBOR([base64url(EncryptionInfo), origin]))]]`: the
 * structure, bound to this request's EncryptionInfo (as sent, base64url) and the origin the browser asserts.
 */
export function sessionTranscript(encryptionInfoB64: string, origin: string): unknown[] {
  const dcapiInfo = cborEncode([encryptionInfoB64, origin]);
  return [null, null, ['dcapi', sha256(dcapiInfo)]];
}

/** The HPKE `info`: the CBOR SessionTranscript (not wrapped as a data item). */
export const hpkeInfo = (transcript: unknown[]): Uint8Array => cborEncode(transcript);

/**
 * ISO/IEC 18013-5 §9.1.3.4: `DeviceAuthenticationBytes = #6.24(bstr .cbor ["DeviceAuthentication",
 * SessionTranscript, DocType, DeviceNameSpacesBytes])`, what the device signature covers.
 */
export function deviceAuthenticationBytes(
  transcript: unknown[],
  docType: string,
  deviceNamespaces: unknown,
): Uint8Array {
  return cborEncode(
    DataItem.fromData(['DeviceAuthentication', transcript, docType, DataItem.fromData(deviceNamespaces)]),
  );
}

/** ISO/IEC 18013-5 §9.1.4: `ReaderAuthenticationBytes = #6.24(bstr .cbor ["ReaderAuthentication", SessionTranscript, ItemsRequestBytes])`. */
export function readerAuthenticationBytes(transcript: unknown[], itemsRequest: ItemsRequest): Uint8Array {
  return cborEncode(
    DataItem.fromData(['ReaderAuthentication', transcript, DataItem.fromData(itemsRequest.encodedStructure)]),
  );
}

/** One document a DeviceRequest asks for: the DCQL Credential Query it stands for, its doctype and elements. */
export interface AnnexCDocRequest {
  queryId: string;
  doctype: string;
  /** namespace -> element identifiers */
  namespaces: Record<string, string[]>;
}

/**
 * The documents of an Annex C request for a DCQL query, or undefined when some credential the query asks
 * for has no mdoc form (an Annex C answer carries mdocs only): without `credential_sets` every Credential
 * Query must be `mso_mdoc`; with them, every required set needs an option of one `mso_mdoc` query. The
 * elements are every claim of the query, required and optional alike (a DeviceRequest cannot mark an
 * element optional; the answer is checked against the query's `claim_sets`).
 */
export function annexCDocRequests(query: DcqlQuery): AnnexCDocRequest[] | undefined {
  const byId = new Map(query.credentials.map((q) => [q.id, q]));
  const isMdoc = (id: string) => byId.get(id)?.format === MDOC_FORMAT;
  let ids: string[];
  if (!query.credential_sets) {
    if (!query.credentials.every((q) => q.format === MDOC_FORMAT)) return undefined;
    ids = query.credentials.map((q) => q.id);
  } else {
    ids = [];
    for (const set of query.credential_sets) {
      const option = set.options.find((o) => o.length === 1 && isMdoc(o[0]));
      if (option) ids.push(option[0]);
      else if (set.required !== false) return undefined;
    }
  }
  const docs: AnnexCDocRequest[] = [];
  for (const id of ids) {
    const q = byId.get(id)!;
    const doctype = q.meta.doctype_value;
    if (typeof doctype !== 'string' || !q.claims?.length) return undefined;
    const namespaces: Record<string, string[]> = {};
    for (const claim of q.claims) {
      const [namespace, element] = claim.path;
      if (claim.path.length !== 2 || typeof namespace !== 'string' || typeof element !== 'string') return undefined;
      (namespaces[namespace] ??= []).push(element);
    }
    docs.push({ queryId: id, doctype, namespaces });
  }
  return docs.length ? docs : undefined;
}

/** Who signs `readerAuth` (ISO/IEC 18013-5 §9.1.4): the reader certificate chain (DER, leaf first) and its key. */
export interface ReaderSigner {
  x5chain: Uint8Array[];
  key: CoseKey;
  /** the COSE algorithm of the key (ES256 for P-256) */
  algorithm: number;
}

/**
 * The DeviceRequest (ISO/IEC 18013-5 §8.3.2.1.2.1), CBOR: version "1.0", one DocRequest per document with
 * every element at `intentToRetain` false, each signed (`readerAuth`, COSE_Sign1 over
 * ReaderAuthenticationBytes with a detached payload and the chain in `x5chain`) when there is a signer.
 */
export async function deviceRequest(
  docs: AnnexCDocRequest[],
  transcript: unknown[],
  signer: ReaderSigner | undefined,
  ctx: Pick<MdocContext, 'cose'>,
): Promise<Uint8Array> {
  const docRequests: DocRequest[] = [];
  for (const doc of docs) {
    const itemsRequest = ItemsRequest.create({
      docType: doc.doctype,
      namespaces: Object.fromEntries(
        Object.entries(doc.namespaces).map(([ns, elements]) => [
          ns,
          Object.fromEntries(elements.map((e) => [e, false])),
        ]),
      ),
    });
    const readerAuth = signer
      ? await ReaderAuth.create(
          {
            protectedHeaders: new Map<number, unknown>([[Header.Algorithm, signer.algorithm]]),
            unprotectedHeaders: new Map<number, unknown>([
              [Header.X5Chain, signer.x5chain.length === 1 ? signer.x5chain[0] : signer.x5chain],
            ]),
            signingKey: signer.key,
            algorithm: signer.algorithm,
            detachedPayload: readerAuthenticationBytes(transcript, itemsRequest),
          },
          ctx,
        )
      : undefined;
    docRequests.push(DocRequest.create({ itemsRequest, ...(readerAuth ? { readerAuth } : {}) }));
  }
  return DeviceRequest.create({ version: DEVICE_REQUEST_VERSION, docRequests }).encode();
}

/**
 * The `org-iso-mdoc` entry of `navigator.credentials.get({ digital: { requests } })`: `deviceRequest` and
 * `encryptionInfo`, both base64url CBOR. The EncryptionInfo is the request's own (the same on every call);
 * the DeviceRequest is signed afresh.
 */
export async function annexCRequest(
  input: { docs: AnnexCDocRequest[]; key: AnnexCKey; origin: string; signer?: ReaderSigner },
  ctx: Pick<MdocContext, 'cose'>,
): Promise<{ protocol: string; data: { deviceRequest: string; encryptionInfo: string } }> {
  const info = encryptionInfo(input.key);
  const request = await deviceRequest(input.docs, sessionTranscript(info, input.origin), input.signer, ctx);
  return {
    protocol: ANNEX_C_PROTOCOL,
    data: { deviceRequest: Buffer.from(request).toString('base64url'), encryptionInfo: info },
  };
}
