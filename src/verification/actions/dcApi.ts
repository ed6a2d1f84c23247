import { decodeProtectedHeader, type JWK } from 'jose';
import { say, type Say } from '../../i18n/catalogues.js';
import { linkToFlow } from '../../telemetry/spans.js';
import {
  ANNEX_C_PROTOCOL,
  annexCDocRequests,
  annexCRequest,
  encryptionInfo,
  hpkeInfo,
  sessionTranscript,
  type ReaderSigner,
} from '../annexC.js';
import { openResponse, readEncryptedResponse } from '../annexCAnswer.js';
import type { ClientIdentity } from '../clientIdentity.js';
import { DC_API_PROTOCOLS, dcApiRequests, dcApiResponseMode, type DcApiRequest } from '../dcApi.js';
import { coseAlgorithmFor, coseKeyOfJwk, mdocContext } from '../mdocContext.js';
import { annexCDocuments } from '../mdocDocument.js';
import type { VerifierDeps } from '../deps.js';
import { personMessage, VerificationRefusal } from '../errors.js';
import type { VerificationRecord, VerificationResult } from '../record.js';
import { decryptWith, publicEncryptionKey } from './encryption.js';
import { verifyAnnexCDocuments, verifyPresentations, walletErrorWords } from './response.js';
import { failed, withinRateLimits } from './outcomes.js';

/**
 * How an answer through the Digital Credentials API ended: verified, refused (the request ended), unanswered
 * (the wallet could not take the request: the holder may ask for a fresh one), or no request to answer.
 */
export type DcApiOutcome =
  | { outcome: 'verified' }
  | { outcome: 'refused'; description: string }
  | { outcome: 'unanswered'; description: string }
  | { outcome: 'gone' };

/** A refused answer: what the holder reads, and the relying party's description naming the rule. */
class Refused extends Error {
  constructor(
    readonly said: Say,
    readonly description: string,
    readonly declined = false,
  ) {
    super(description);
  }
}

const malformed = (description: string) => new Refused(say('refusal.malformed_response'), description);

/** OpenID4VP 1.0 Appendix A: the requests for the holder's page, for a request still waiting for its answer. */
export async function dcApiRequestFor(deps: VerifierDeps, requestId: string): Promise<DcApiRequest[] | undefined> {
  const record = await deps.requests.find(requestId);
  if (!record) return undefined;
  const publicKey = record.encryptionKey && publicEncryptionKey(record.encryptionKey);
  const { query } = deps.expectationsFor(record);
  const verifierInfo = deps.verifierInfoFor(record, query);
  const requests = await dcApiRequests(deps.clientIdentity, {
    clientId: deps.clientIdentity.clientId,
    origin: deps.origin,
    responseMode: record.responseMode,
    ...(publicKey ? { encryptionKey: publicKey } : {}),
    nonce: record.nonce,
    dcqlQuery: query,
    ...(verifierInfo ? { verifierInfo } : {}),
    issuedAt: Math.floor(Date.now() / 1000),
    expiresAt: record.expiresAt,
  });
  // ISO/IEC 18013-7 Annex C, after the OpenID4VP entries: what Safari and Apple Wallet answer
  const docs = record.annexC && annexCDocRequests(query);
  if (record.annexC && docs) {
    const signer = readerSigner(deps.clientIdentity);
    requests.push(
      await annexCRequest(
        { docs, key: record.annexC, origin: deps.origin, ...(signer ? { signer } : {}) },
        mdocContext,
      ),
    );
  }
  return requests;
}

/** The reader certificate's key as COSE wants it (ES256 for the P-256 keys the configuration takes). */
function readerSigner({ reader }: ClientIdentity): ReaderSigner | undefined {
  if (!reader) return undefined;
  const jwk = reader.key.export({ format: 'jwk' }) as JWK;
  const algorithm = coseAlgorithmFor(jwk);
  return { x5chain: reader.x5chain, key: coseKeyOfJwk(jwk, algorithm), algorithm };
}

/**
 * The credential the holder's page got from `navigator.credentials.get` (`{ protocol, data }`), for the
 * request `requestId`. One answer per request (D14): the request's state is consumed before anything is
 * looked at, so this answer and one through the QR code race and one wins. Every refusal ends the request
 * as the QR path's do (`failed`: the relying party, an External Client's webhook and the metrics hear it).
 */
export async function takeDcApiAnswer(
  deps: VerifierDeps,
  requestId: string,
  answer: unknown,
  address: string,
): Promise<DcApiOutcome> {
  const record = await deps.requests.find(requestId);
  await withinRateLimits(deps, address, record?.clientId);
  const taken = record && (await deps.requests.takeByState(record.state));
  if (!taken) return { outcome: 'gone' };
  linkToFlow(record.trace);
  try {
    let result: VerificationResult;
    if (isObject(answer) && answer.protocol === ANNEX_C_PROTOCOL && record.annexC) {
      result = await annexCAnswer(deps, record, answer.data);
    } else {
      const { params, encrypted } = await answerParams(record, answer);
      if (params.error !== undefined) {
        // the holder said no: an end; any other error: this wallet could not take it, and a fresh request may do
        if (String(params.error) !== 'access_denied') {
          const { message, description } = walletErrorWords(params.error);
          await deps.requests.refused(record, message, description);
          return { outcome: 'unanswered', description };
        }
        throw walletError(params.error);
      }
      result = await verifyPresentations(deps, record, params.vp_token, encrypted, deps.origin);
    }
    await deps.onVerified?.(record, result);
    await deps.requests.done(record, result);
    return { outcome: 'verified' };
  } catch (err) {
    const refused =
      err instanceof Refused
        ? err
        : err instanceof VerificationRefusal
          ? new Refused(personMessage(err.reason), `the presentation was refused: ${err.message}`)
          : undefined;
    if (!refused) {
      await failed(deps, record, say('status.checkFailed'), 'the presentation could not be checked');
      throw err;
    }
    await failed(deps, record, refused.said, refused.description, refused.declined);
    return { outcome: 'refused', description: refused.description };
  }
}

/** The answer's Authorization Response parameters (Appendix A.2): `data` as is (`dc_api`), or decrypted (`dc_api.jwt`). */
async function answerParams(
  record: VerificationRecord,
  answer: unknown,
): Promise<{ params: Record<string, unknown>; encrypted: boolean }> {
  if (!isObject(answer) || typeof answer.protocol !== 'string' || !DC_API_PROTOCOLS.includes(answer.protocol)) {
    const offered = [...DC_API_PROTOCOLS, ...(record.annexC ? [ANNEX_C_PROTOCOL] : [])];
    throw malformed(`dc_api: the answer is not of a protocol this request offered (${offered.join(', ')})`);
  }
  const data = answerData(answer.data);
  if (typeof data.response === 'string') {
    if (!record.encryptionKey)
      throw malformed('response: this request asks for a plain response (dc_api); the wallet sent a JWE');
    return { params: await decrypt(record, data.response), encrypted: true };
  }
  // §8.3.1: a wallet that cannot encrypt may still say it declined
  if (record.encryptionKey && data.error === undefined) {
    const description = `response: this request asks for an encrypted response (${dcApiResponseMode(record.responseMode)}); the wallet sent it unencrypted`;
    throw new Refused(say('status.unencrypted'), description);
  }
  return { params: data, encrypted: false };
}

/** OpenID4VP 1.0 §8.3: the JWE is this request's: encrypted to its own key, a JSON object inside. */
async function decrypt(record: VerificationRecord, jwe: string): Promise<Record<string, unknown>> {
  const key = record.encryptionKey!;
  let kid: unknown;
  try {
    kid = decodeProtectedHeader(jwe).kid;
  } catch {
    throw malformed('response: not a JWE');
  }
  if (kid !== undefined && kid !== key.kid) throw malformed("response: the JWE is not encrypted to this request's key");
  const decrypted = await decryptWith(key, jwe);
  if ('why' in decrypted) throw malformed(decrypted.why);
  return decrypted.params;
}

/** Browsers have handed `data` over as an object and as its JSON text. */
function answerData(value: unknown): Record<string, unknown> {
  const data = typeof value === 'string' ? parseJson(value) : value;
  if (!isObject(data)) throw malformed('dc_api: the answer has no data object');
  return data;
}

/**
 * ISO/IEC 18013-7 Annex C: `data.response`, the EncryptedResponse, opened with this request's key over the
 * `dcapi` SessionTranscript of its EncryptionInfo and the service's origin (never the page's word), then its
 * DeviceResponse verified as every mdoc is, each device signature over that transcript.
 */
async function annexCAnswer(
  deps: VerifierDeps,
  record: VerificationRecord,
  value: unknown,
): Promise<VerificationResult> {
  const key = record.annexC!;
  const docs = annexCDocRequests(deps.expectationsFor(record).query);
  if (!docs) throw malformed(`dc_api: this request offered no ${ANNEX_C_PROTOCOL} entry`);
  const transcript = sessionTranscript(encryptionInfo(key), deps.origin);
  const encrypted = readEncryptedResponse(answerData(value).response);
  const deviceResponse = await openResponse(key, encrypted, hpkeInfo(transcript));
  return verifyAnnexCDocuments(deps, record, annexCDocuments(deviceResponse, docs), transcript);
}

function walletError(error: unknown): Refused {
  const { message, description } = walletErrorWords(error);
  return new Refused(message, description, String(error) === 'access_denied');
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
