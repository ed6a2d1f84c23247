import type { Document } from '@owf/mdoc';
import { base64url, calculateJwkThumbprint } from 'jose';
import type { Context } from 'koa';
import { safeErrorDescription } from '../../http/errorDescription.js';
import { readForm } from '../../http/form.js';
import { say, type Say } from '../../i18n/catalogues.js';
import type { MessageId } from '../../i18n/en.js';
import { randomBase64url } from '../../random.js';
import { ProtocolError } from '../../rules/errors.js';
import { linkToFlow } from '../../telemetry/spans.js';
import type { Expectations, VerifierDeps } from '../deps.js';
import { personMessage, VerificationRefusal } from '../errors.js';
import type { VerificationRecord, VerificationResult } from '../record.js';
import { readVpToken, RESPONSE_BODY_LIMIT, verifyResponse } from '../response.js';
import { originAudience } from '../dcApi.js';
import { decryptResponse, publicEncryptionKey, type Refusal } from './encryption.js';
import { failed, OPAQUE, withinRateLimits } from './outcomes.js';

/** Wallet error codes (OpenID4VP 1.0 §8.5, RFC 6749 §4.1.2.1) as the holder reads them. */
const WALLET_ERRORS: Record<string, MessageId> = {
  access_denied: 'status.walletDeclined',
  vp_formats_not_supported: 'status.walletUnsupportedFormat',
  wallet_unavailable: 'status.walletUnavailable',
};

type Answer = (status: number, body: Record<string, unknown>) => void;
/** Ends the request and answers the wallet. */
type Ended = (
  status: number,
  body: Record<string, unknown>,
  message: Say,
  description: string,
  declined?: boolean,
) => Promise<void>;

/** OpenID4VP 1.0 §8.2, §8.3: the Authorization Response (or Authorization Error Response), by direct_post or direct_post.jwt. */
export async function takeResponse(deps: VerifierDeps, ctx: Context): Promise<void> {
  ctx.set('Cache-Control', 'no-store');
  const answer: Answer = (status, body) => {
    ctx.status = status;
    ctx.body =
      typeof body.error_description === 'string'
        ? { ...body, error_description: safeErrorDescription(body.error_description) }
        : body;
  };
  if (!ctx.is('application/x-www-form-urlencoded')) {
    throw new ProtocolError(
      'invalid_request',
      'the response must be sent as application/x-www-form-urlencoded (response_mode direct_post or direct_post.jwt)',
    );
  }
  const read = await readResponseParams(deps, ctx);
  if ('refusal' in read)
    return answer(read.refusal.status, { error: read.refusal.error, error_description: read.refusal.description });
  const { params, encrypted } = read;
  const state = params.state;
  if (state === undefined) return answer(400, { error: 'invalid_request', error_description: 'state: required' });
  // one answer per request (D14): the state is consumed before anything else is looked at
  const taken = typeof state === 'string' && OPAQUE.test(state) ? await deps.requests.takeByState(state) : undefined;
  if (!taken)
    return answer(400, {
      error: 'invalid_request',
      error_description: 'state: unknown, expired or already answered: start again from the app',
    });
  const { record, device } = taken;
  linkToFlow(record.trace);
  // same-device (§8.2): the browser goes back to the holder's page, which finishes (or ends) the flow
  const back = device === 'same' && record.returnUri !== undefined ? record.returnUri : undefined;
  const ended: Ended = async (status, body, message, description, declined = false) => {
    await failed(deps, record, message, description, declined);
    return answer(status, back ? { ...body, redirect_uri: back } : body);
  };
  try {
    if (params.error !== undefined) {
      // the holder said no: an end; any other error: the wallet could not take it, and a fresh request may do
      if (params.error !== 'access_denied') {
        const { message, description } = walletErrorWords(params.error);
        await deps.requests.refused(record, message, description);
        return answer(200, back ? { redirect_uri: back } : {});
      }
      return await walletError(params.error, ended);
    }
    if (record.responseMode === 'direct_post.jwt' && !encrypted) {
      const description =
        'response: this request asks for an encrypted response (direct_post.jwt); the wallet sent it unencrypted';
      return await ended(
        400,
        { error: 'invalid_request', error_description: description },
        say('status.unencrypted'),
        description,
      );
    }
    const result = await verifyPresentations(deps, record, params.vp_token, encrypted);
    return await finish(deps, record, result, back, answer);
  } catch (err) {
    if (err instanceof VerificationRefusal) {
      return await ended(
        400,
        { error: err.error, error_description: err.message },
        personMessage(err.reason),
        `the presentation was refused: ${err.message}`,
      );
    }
    await failed(deps, record, say('status.checkFailed'), 'the presentation could not be checked');
    throw err;
  }
}

/** The response's parameters: the form's, or (`response`, direct_post.jwt) the decrypted ones; the rate limits consumed first. */
async function readResponseParams(
  deps: VerifierDeps,
  ctx: Context,
): Promise<{ params: Record<string, unknown>; encrypted: boolean } | { refusal: Refusal }> {
  const form = await readForm(ctx, RESPONSE_BODY_LIMIT);
  if (form.response === undefined) {
    await withinRateLimits(deps, ctx.ip);
    return { params: form, encrypted: false };
  }
  const decrypted = await decryptResponse(deps, form.response, ctx.ip);
  return 'refusal' in decrypted ? decrypted : { params: decrypted.params, encrypted: true };
}

/**
 * An Authorization Error Response ends the request; it was processed: 200 (§8.2). A wallet that cannot
 * encrypt may send it unencrypted (§8.3.1).
 */
async function walletError(error: unknown, ended: Ended): Promise<void> {
  const { message, description } = walletErrorWords(error);
  return ended(200, {}, message, description, String(error) === 'access_denied');
}

/** A wallet's error code as the holder reads it and as the relying party is told it. */
export function walletErrorWords(error: unknown): { message: Say; description: string } {
  const code = String(error);
  const known = Object.hasOwn(WALLET_ERRORS, code);
  return {
    message: say(known ? WALLET_ERRORS[code] : 'status.walletError'),
    description: known ? `the wallet answered ${code}` : 'the wallet answered with an error',
  };
}

/**
 * The vp_token against the request's query, nonce, client and trust (src/verification/response.ts).
 * `origin`: an answer through the Digital Credentials API (OpenID4VP 1.0 Appendix A.4, A.5), bound to the
 * page's origin instead of the verifier's client identifier.
 */
export async function verifyPresentations(
  deps: VerifierDeps,
  record: VerificationRecord,
  vpToken: unknown,
  encrypted: boolean,
  origin?: string,
): Promise<VerificationResult> {
  const { issuerKeys, ...expected } = deps.expectationsFor(record);
  const presentations = readVpToken(vpToken, expected.query);
  const publicKey = encrypted && record.encryptionKey ? publicEncryptionKey(record.encryptionKey) : undefined;
  return verifyResponse(
    presentations,
    {
      ...expected,
      ...(origin === undefined
        ? { clientId: deps.clientIdentity.clientId }
        : { clientId: originAudience(origin), origin }),
      ...bound(deps, record),
      // §B.2.6.1: an encrypted response's mdoc is bound to the key it was encrypted to
      ...(publicKey ? { jwkThumbprint: base64url.decode(await calculateJwkThumbprint(publicKey)) } : {}),
    },
    presentationContext(deps, issuerKeys),
  );
}

/**
 * ISO/IEC 18013-7 Annex C: the documents of the DeviceResponse (matched to the request's documents) against
 * the request's query and trust, each device signature over the `dcapi` SessionTranscript.
 */
export async function verifyAnnexCDocuments(
  deps: VerifierDeps,
  record: VerificationRecord,
  documents: Map<string, Document>,
  transcript: unknown[],
): Promise<VerificationResult> {
  const { issuerKeys, ...expected } = deps.expectationsFor(record);
  return verifyResponse(
    documents,
    {
      ...expected,
      clientId: originAudience(deps.origin),
      ...bound(deps, record),
      annexCTranscript: transcript,
    },
    presentationContext(deps, issuerKeys),
  );
}

/** What every answer to `record` is bound to and trusted by, whatever the path. */
const bound = (deps: VerifierDeps, record: VerificationRecord) => ({
  nonce: record.nonce,
  responseUri: deps.responseUri,
  // D12: a PID is trusted by the identity block's issuers and, as an mdoc, by the IACAs named for it alone
  anchorsFor: record.identity ? deps.pidAnchorsFor : deps.anchorsFor,
});

const presentationContext = (deps: VerifierDeps, issuerKeys: Expectations['issuerKeys']) => ({
  issuerKeys,
  clockTolerance: deps.clockTolerance,
  statusChecks: deps.statusChecks,
  onStatusUnavailable: deps.onStatusUnavailable,
  ownMdocStatus: deps.ownMdocStatus,
});

/** A verified presentation: done, or (same-device) waiting for the browser to come back with its response code. */
async function finish(
  deps: VerifierDeps,
  record: VerificationRecord,
  result: VerificationResult,
  back: string | undefined,
  answer: Answer,
): Promise<void> {
  if (back) {
    // §8.2, HAIP 1.0: only the browser that comes back with this code completes the flow
    const responseCode = randomBase64url(32);
    await deps.requests.awaitReturn(record, result, responseCode);
    const url = new URL(back);
    url.searchParams.set('response_code', responseCode);
    return answer(200, { redirect_uri: url.href });
  }
  await deps.onVerified?.(record, result);
  await deps.requests.done(record, result);
  return answer(200, {});
}
