import type { Context } from 'koa';
import { readForm } from '../../http/form.js';
import { ProtocolError } from '../../rules/errors.js';
import { linkToFlow } from '../../telemetry/spans.js';
import type { VerifierDeps } from '../deps.js';
import {
  authorizationRequestPayload,
  REQUEST_OBJECT_TYPE,
  requestObject,
  RESPONSE_ENC_VALUES,
} from '../requestObject.js';
import type { VerificationRecord } from '../record.js';
import { publicEncryptionKey } from './encryption.js';
import { OPAQUE } from './outcomes.js';

/** The largest form a wallet POSTs to the request URI (wallet_metadata, wallet_nonce). */
const REQUEST_URI_BODY_LIMIT = 64 * 1024;
const WALLET_NONCE_LIMIT = 512;

interface WalletPost {
  metadata?: Record<string, unknown>;
  nonce?: string;
}

/**
 * RFC 9101 §5.2.3, OpenID4VP 1.0 §5.10.1: the Request Object, `application/oauth-authz-req+jwt`, served once
 * for its reference, by GET or (`post`) by POST with the wallet's metadata and nonce.
 */
export async function serveRequestObject(
  deps: VerifierDeps,
  ctx: Context,
  reference: string,
  post: boolean,
): Promise<void> {
  ctx.set('Cache-Control', 'no-store');
  const wallet = post ? await readWalletPost(ctx) : {};
  const record = OPAQUE.test(reference) ? await deps.requests.takeRequestObject(reference) : undefined;
  linkToFlow(record?.trace); // the wallet's requests join the request's flow
  if (!record) {
    ctx.status = 404;
    ctx.body = {
      error: 'invalid_request_uri',
      error_description: 'request_uri: unknown, expired or already retrieved: start again from the app',
    };
    return;
  }
  const payload = payloadFor(deps, record, wallet);
  ctx.type = `application/${REQUEST_OBJECT_TYPE}`;
  ctx.body = await requestObject(deps.clientIdentity, payload);
}

/** The Request Object's claims for a request, as the wallet that fetches it asked (§5.8, §5.10). */
function payloadFor(deps: VerifierDeps, record: VerificationRecord, wallet: WalletPost) {
  const { metadata } = wallet;
  // §5.8: a wallet that names itself is the audience
  const issuer =
    typeof metadata?.issuer === 'string' && /^https:\/\//.test(metadata.issuer) ? metadata.issuer : undefined;
  const publicKey = record.encryptionKey && publicEncryptionKey(record.encryptionKey);
  const { query } = deps.expectationsFor(record);
  const verifierInfo = deps.verifierInfoFor(record, query);
  const payload = authorizationRequestPayload({
    clientId: deps.clientIdentity.clientId,
    responseUri: deps.responseUri,
    responseMode: record.responseMode,
    ...(publicKey ? { encryptionKey: publicKey } : {}),
    ...(wallet.nonce !== undefined ? { walletNonce: wallet.nonce } : {}),
    nonce: record.nonce,
    state: record.state,
    dcqlQuery: query,
    ...(verifierInfo ? { verifierInfo } : {}),
    issuedAt: Math.floor(Date.now() / 1000),
    expiresAt: record.expiresAt,
  });
  if (issuer) payload.aud = issuer;
  // §5.10: the enc values the wallet supports, of ours (all of ours when it supports none: it then says so)
  const encs = metadata?.authorization_encryption_enc_values_supported;
  if (publicKey && Array.isArray(encs)) {
    const shared = RESPONSE_ENC_VALUES.filter((enc) => encs.includes(enc));
    if (shared.length)
      payload.client_metadata = { ...payload.client_metadata, encrypted_response_enc_values_supported: shared };
  }
  return payload;
}

/**
 * What a wallet says of itself when it POSTs to the request URI (OpenID4VP 1.0 §5.10): its metadata and
 * nonce. Read before the request object is taken, so a malformed POST uses nothing up.
 */
async function readWalletPost(ctx: Context): Promise<WalletPost> {
  if (!ctx.is('application/x-www-form-urlencoded'))
    throw new ProtocolError(
      'invalid_request',
      'the request URI takes a POST as application/x-www-form-urlencoded (OpenID4VP 1.0 section 5.10)',
    );
  const form = await readForm(ctx, REQUEST_URI_BODY_LIMIT);
  let metadata: Record<string, unknown> | undefined;
  if (form.wallet_metadata !== undefined) {
    try {
      metadata = JSON.parse(form.wallet_metadata) as Record<string, unknown>;
    } catch {
      throw new ProtocolError('invalid_request', 'wallet_metadata: not valid JSON');
    }
    if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata))
      throw new ProtocolError('invalid_request', 'wallet_metadata: must be a JSON object');
  }
  const nonce = form.wallet_nonce;
  if (nonce !== undefined && (nonce.length === 0 || nonce.length > WALLET_NONCE_LIMIT))
    throw new ProtocolError('invalid_request', `wallet_nonce: must be 1 to ${WALLET_NONCE_LIMIT} characters`);
  return { metadata, nonce };
}
