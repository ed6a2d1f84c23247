import { decodeProtectedHeader } from 'jose';
import { say, type Say } from '../../i18n/catalogues.js';
import { linkToFlow } from '../../telemetry/spans.js';
import { DC_API_PROTOCOLS, dcApiRequests, dcApiResponseMode, type DcApiRequest } from '../dcApi.js';
import type { VerifierDeps } from '../deps.js';
import { personMessage, VerificationRefusal } from '../errors.js';
import type { VerificationRecord } from '../record.js';
import { decryptWith, publicEncryptionKey } from './encryption.js';
import { verifyPresentations, walletErrorWords } from './response.js';
import { failed, withinRateLimits } from './outcomes.js';

/** How an answer through the Digital Credentials API ended: verified, refused (the request ended), or no request to answer. */
export type DcApiOutcome = { outcome: 'verified' } | { outcome: 'refused'; description: string } | { outcome: 'gone' };

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
  return dcApiRequests(deps.clientIdentity, {
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
    const { params, encrypted } = await answerParams(record, answer);
    if (params.error !== undefined) throw walletError(params.error);
    const result = await verifyPresentations(deps, record, params.vp_token, encrypted, deps.origin);
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
  if (!isObject(answer) || typeof answer.protocol !== 'string' || !DC_API_PROTOCOLS.includes(answer.protocol))
    throw malformed(`dc_api: the answer is not of a protocol this request offered (${DC_API_PROTOCOLS.join(', ')})`);
  // browsers have handed `data` over as an object and as its JSON text
  let data = answer.data;
  if (typeof data === 'string') data = parseJson(data);
  if (!isObject(data)) throw malformed('dc_api: the answer has no data object');
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
