import { createPrivateKey, type JsonWebKey } from 'node:crypto';
import { compactDecrypt, decodeProtectedHeader, exportJWK, generateKeyPair, base64url, calculateJwkThumbprint, type JWK } from 'jose';
import type { Context, Middleware } from 'koa';
import type { CredentialType, TrustedIssuer } from '../config/schema.js';
import { readForm } from '../http/form.js';
import { safeErrorDescription } from '../http/errorDescription.js';
import type { RateLimits } from '../http/rateLimits.js';
import { router } from '../http/router.js';
import { ProtocolError } from '../rules/errors.js';
import type { Store } from '../store/types.js';
import type { ClientIdentity } from './clientIdentity.js';
import { dcqlQueryFor, mdocQueryId, type DcqlQuery } from './dcql.js';
import { personMessage, VerificationRefusal } from './errors.js';
import { ENGLISH, say, type Say } from '../i18n/catalogues.js';
import type { MessageId } from '../i18n/en.js';
import { IssuerKeys } from './issuerKeys.js';
import { StatusChecks } from './statusCheck.js';
import { authorizationRequestPayload, REQUEST_OBJECT_TYPE, requestObject, RESPONSE_ALG, RESPONSE_ENC_VALUES, walletUriFor } from './requestObject.js';
import { VerificationRequests, type Device, type RequestStatus, type VerificationRecord, type VerificationResult } from './requests.js';
import { readVpToken, RESPONSE_BODY_LIMIT, verifyResponse } from './response.js';
import { randomBase64url } from '../random.js';
import { subjectKeyIdentifier } from '../keys/x509.js';
import { anchorsFor, isOwnVct, type AnchorFormat } from '../keys/trustAnchors.js';
import { vctFor } from '../issuance/credentialConfigurations.js';
import { linkToFlow } from '../telemetry/spans.js';

export type { RequestStatus, VerificationResult } from './requests.js';

export interface VerifierOptions {
  /** e.g. https://vc.example.com (no trailing slash) */
  baseUrl: string;
  store: Store;
  credentialTypes: CredentialType[];
  /** from config */
  trustedIssuers: TrustedIssuer[];
  /** this service's wallet issuer and its PUBLIC credential keys */
  ownIssuer: { issuer: string; jwks: { keys: JWK[] } | (() => { keys: JWK[] }) };
  /** how the verifier identifies itself (`verifier` config, src/verification/clientIdentity.ts) */
  clientIdentity: ClientIdentity;
  /** seconds a request (and its request_uri) lives */
  requestLifetime: number;
  /** seconds of clock skew accepted on credential and key binding times, default 30 */
  clockTolerance?: number;
  /** for remote key sets (tests may pass their own) */
  fetch?: typeof fetch;
  /**
   * Called with a verified presentation, before the request shows `done` (same-device: once the browser is
   * back with its response code): the holder's prompt finishes the authorisation from here.
   */
  onVerified?: (record: VerificationRecord, result: VerificationResult) => Promise<void>;
  /** Called when a request fails for good (the wallet declined, or the presentation was refused), with the holder's message and the relying party's description. */
  onFailed?: (record: VerificationRecord, failure: { message: string; description: string; declined?: boolean }) => Promise<void>;
  /** D12: what a request for a person-identification credential asks for, and whose credentials it accepts */
  identity?: IdentityRequestKind;
  /** D18 `statusList.onUnavailable` (default refuse) */
  onStatusUnavailable?: 'refuse' | 'accept';
  /** `statusList.maxEntries`: a larger status list is refused (default 16 Mi) */
  statusListMaxEntries?: number;
  /**
   * `vpResponse`: every response read consumes its address's budget, and the budget of the request's relying
   * party when the record names one and is read before the state is taken (an encrypted response, found by
   * its key's `kid`); an unencrypted response names its request only by the state it consumes, so it counts
   * per address only. Both before anything is decrypted, taken or verified.
   */
  rateLimits?: RateLimits;
}

/** A request for a person-identification credential (D12): its own query, and its own trusted issuers only. */
export interface IdentityRequestKind {
  query: DcqlQuery;
  /** per Credential Query id, the claims that go into the result */
  claimNames: ReadonlyMap<string, readonly string[]>;
  subjectClaim?: string;
  trustedIssuers: TrustedIssuer[];
}

export type CreateRequestInput = {
  requestId: string;
  external?: boolean;
  /** whom the claims are for (kept with the request, handed back on it) */
  clientId?: string;
  /**
   * The holder's page, where a wallet on the same device sends the browser back with a response code
   * (OpenID4VP 1.0 §8.2): with it, the request also has a same-device link, and a presentation made through
   * that link completes only in the browser that comes back.
   */
  returnUri?: string;
  /** the flow's root span context, kept with the request for the wallet's requests */
  trace?: string;
} & ({ credentialTypes: string[]; identity?: undefined } | { identity: 'VerifiedIdentity'; credentialTypes?: undefined });

export interface CreatedRequest {
  /** the cross-device link (QR code) */
  walletUri: string;
  /** the same-device link (a button on the holder's page), when a returnUri was given */
  sameDeviceUri?: string;
  /** epoch s */
  expiresAt: number;
}

/** How the browser's return with a response code ended (same-device). */
export type ReturnOutcome = 'completed' | 'refused';

export interface Verifier {
  /** the verifier's client identifier, the KB-JWT aud */
  clientId: string;
  /** serves GET and POST request_uri and POST response_uri; next() otherwise */
  middleware: Middleware;
  createRequest(input: CreateRequestInput): Promise<CreatedRequest>;
  requestStatus(requestId: string): Promise<RequestStatus>;
  /** available once status is done */
  result(requestId: string): Promise<VerificationResult | undefined>;
  /** same-device: the browser came back with this response code; a wrong or used one ends the request */
  completeReturn(requestId: string, responseCode: string): Promise<ReturnOutcome>;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,200}$/;
/** Request object references and states: 256 random bits, base64url. */
const OPAQUE = /^[A-Za-z0-9_-]{43}$/;
/** Encryption key ids: 128 random bits, base64url. */
const KID = /^[A-Za-z0-9_-]{22}$/;
/** The largest form a wallet POSTs to the request URI (wallet_metadata, wallet_nonce). */
const REQUEST_URI_BODY_LIMIT = 64 * 1024;
const WALLET_NONCE_LIMIT = 512;

/** Wallet error codes (OpenID4VP 1.0 §8.5, RFC 6749 §4.1.2.1) as the holder reads them. */
const WALLET_ERRORS: Record<string, MessageId> = {
  access_denied: 'status.walletDeclined',
  vp_formats_not_supported: 'status.walletUnsupportedFormat',
  wallet_unavailable: 'status.walletUnavailable',
};

/**
 * The wallet-facing side of verification (D10), as OpenID4VC HAIP 1.0 wallets expect it: OpenID4VP 1.0, DCQL,
 * the request passed by reference (GET or POST, §5.10) and signed under an x509 Client Identifier Prefix
 * (§5.9.3; `redirect_uri`, unsigned, for development), the answer encrypted to a key of the request's own
 * (`direct_post.jwt`, §8.3), SD-JWT VC and mdoc presentations.
 *
 * Paths, under the base URL: `/vp/request/<reference>` serves the Request Object (once), POST `/vp/response`
 * takes the Authorization Response, identified by its `state` (unguessable, not the requestId), or by its
 * encryption key's `kid` and then its `state`.
 */
export function createVerifier(opts: VerifierOptions): Verifier {
  const base = new URL(opts.baseUrl);
  const basePath = base.pathname.replace(/\/$/, '');
  const requestPath = `${basePath}/vp/request/`;
  const responsePath = `${basePath}/vp/response`;
  const responseUri = `${opts.baseUrl.replace(/\/$/, '')}/vp/response`;
  const requestUriBase = `${opts.baseUrl.replace(/\/$/, '')}/vp/request/`;
  const { clientId, responseMode, trustAnchors } = opts.clientIdentity;
  const types = new Map(opts.credentialTypes.map((t) => [t.name, t]));
  // a type of our own vct namespace is never vouched for by a foreign chain
  const ownTypes = new Set(opts.credentialTypes.filter((t) => isOwnVct(vctFor(t, opts.baseUrl), opts.baseUrl)).map((t) => t.name));
  const anchorsOf = (format: AnchorFormat, type: string) => anchorsFor(trustAnchors, format, type, ownTypes.has(type));
  // OpenID4VP 1.0 §6.1.1.1: a type's mdoc query names the roots that may vouch for it by their key identifier
  const aki = (type: string) => anchorsOf('mso_mdoc', type).map(subjectKeyIdentifier).filter((v): v is string => v !== undefined);

  const requests = new VerificationRequests(opts.store);
  const issuerKeys = new IssuerKeys({ ownIssuer: opts.ownIssuer, trustedIssuers: opts.trustedIssuers, fetch: opts.fetch });
  // D12: a PID is accepted from the identity block's issuers only, never from the credential issuers
  const identityIssuerKeys = opts.identity && new IssuerKeys({ trustedIssuers: opts.identity.trustedIssuers, fetch: opts.fetch });
  // D18: status lists of presented credentials, cached for their ttl across requests
  const statusChecks = new StatusChecks(opts.fetch, opts.statusListMaxEntries);

  /** What a request asks for, whose credentials it accepts, and which claims it reads. */
  function expectationsFor(record: VerificationRecord) {
    if (record.identity) {
      if (!opts.identity || !identityIssuerKeys) throw new Error('identity requests are not configured');
      return { ...opts.identity, issuerKeys: identityIssuerKeys };
    }
    const requested = record.credentialTypes.map((name) => types.get(name)!);
    const claimNames = new Map<string, readonly string[]>();
    const mdocNamespaces = new Map<string, string>();
    const typeNames = new Map<string, string>();
    for (const t of requested) {
      claimNames.set(t.name, Object.keys(t.attributes));
      if (t.mdoc) {
        claimNames.set(mdocQueryId(t.name), Object.keys(t.attributes));
        mdocNamespaces.set(mdocQueryId(t.name), t.mdoc.namespace);
        typeNames.set(mdocQueryId(t.name), t.name);
      }
    }
    return { query: dcqlQueryFor(requested, opts.baseUrl, aki), claimNames, mdocNamespaces, typeNames, issuerKeys };
  }

  /** OpenID4VP 1.0 §8.3 and HAIP 1.0: a key of the request's own, ECDH-ES on P-256, found again by its kid. */
  async function newEncryptionKey(): Promise<JWK> {
    const { privateKey } = await generateKeyPair(RESPONSE_ALG, { crv: 'P-256', extractable: true });
    return { ...(await exportJWK(privateKey)), kid: randomBase64url(16), use: 'enc', alg: RESPONSE_ALG };
  }

  async function createRequest(input: CreateRequestInput): Promise<CreatedRequest> {
    if (!REQUEST_ID.test(input.requestId)) throw new TypeError('requestId must be 1-200 letters, digits, ".", "_" or "-"');
    const credentialTypes = input.credentialTypes ?? [];
    if (input.identity) {
      if (!opts.identity) throw new TypeError('identity requests are not configured (identity.VerifiedIdentity)');
    } else {
      if (credentialTypes.length === 0) throw new TypeError('at least one credential type must be requested');
      if (new Set(credentialTypes).size !== credentialTypes.length) throw new TypeError('a credential type is requested twice');
      for (const name of credentialTypes) if (!types.has(name)) throw new TypeError(`unknown credential type ${name}`);
    }

    const createdAt = Math.floor(Date.now() / 1000);
    const record: VerificationRecord = {
      requestId: input.requestId,
      credentialTypes: [...credentialTypes],
      ...(input.identity ? { identity: input.identity } : {}),
      ...(input.clientId !== undefined ? { clientId: input.clientId } : {}),
      nonce: randomBase64url(32),
      state: randomBase64url(32),
      responseMode,
      ...(responseMode === 'direct_post.jwt' ? { encryptionKey: await newEncryptionKey() } : {}),
      ...(input.returnUri !== undefined ? { returnUri: input.returnUri } : {}),
      createdAt,
      expiresAt: createdAt + opts.requestLifetime,
      ...(input.external ? { external: true } : {}),
      ...(input.trace ? { trace: input.trace } : {}),
    };
    const references: Partial<Record<Device, string>> = { cross: randomBase64url(32), ...(input.returnUri !== undefined ? { same: randomBase64url(32) } : {}) };
    await requests.create(record, references);
    return {
      walletUri: walletUriFor(clientId, `${requestUriBase}${references.cross}`),
      ...(references.same ? { sameDeviceUri: walletUriFor(clientId, `${requestUriBase}${references.same}`) } : {}),
      expiresAt: record.expiresAt,
    };
  }

  /**
   * What a wallet says of itself when it POSTs to the request URI (OpenID4VP 1.0 §5.10): its metadata and
   * nonce. Read before the request object is taken, so a malformed POST uses nothing up.
   */
  async function readWalletPost(ctx: Context): Promise<{ metadata?: Record<string, unknown>; nonce?: string }> {
    if (!ctx.is('application/x-www-form-urlencoded')) throw new ProtocolError('invalid_request', 'the request URI takes a POST as application/x-www-form-urlencoded (OpenID4VP 1.0 section 5.10)');
    const form = await readForm(ctx, REQUEST_URI_BODY_LIMIT);
    let metadata: Record<string, unknown> | undefined;
    if (form.wallet_metadata !== undefined) {
      try {
        metadata = JSON.parse(form.wallet_metadata) as Record<string, unknown>;
      } catch {
        throw new ProtocolError('invalid_request', 'wallet_metadata: not valid JSON');
      }
      if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) throw new ProtocolError('invalid_request', 'wallet_metadata: must be a JSON object');
    }
    const nonce = form.wallet_nonce;
    if (nonce !== undefined && (nonce.length === 0 || nonce.length > WALLET_NONCE_LIMIT)) throw new ProtocolError('invalid_request', `wallet_nonce: must be 1 to ${WALLET_NONCE_LIMIT} characters`);
    return { metadata, nonce };
  }

  /** RFC 9101 §5.2.3, OpenID4VP 1.0 §5.10.1: the Request Object, `application/oauth-authz-req+jwt`. */
  async function serveRequestObject(ctx: Context, reference: string, post: boolean): Promise<void> {
    ctx.set('Cache-Control', 'no-store');
    const wallet = post ? await readWalletPost(ctx) : {};
    const record = OPAQUE.test(reference) ? await requests.takeRequestObject(reference) : undefined;
    linkToFlow(record?.trace); // the wallet's requests join the request's flow
    if (!record) {
      ctx.status = 404;
      ctx.body = { error: 'invalid_request_uri', error_description: 'request_uri: unknown, expired or already retrieved: start again from the app' };
      return;
    }
    const { metadata } = wallet;
    // §5.8: a wallet that names itself is the audience
    const issuer = typeof metadata?.issuer === 'string' && /^https:\/\//.test(metadata.issuer) ? metadata.issuer : undefined;
    const publicKey = record.encryptionKey && publicEncryptionKey(record.encryptionKey);
    const payload = authorizationRequestPayload({
      clientId,
      responseUri,
      responseMode: record.responseMode,
      ...(publicKey ? { encryptionKey: publicKey } : {}),
      ...(wallet.nonce !== undefined ? { walletNonce: wallet.nonce } : {}),
      nonce: record.nonce,
      state: record.state,
      dcqlQuery: expectationsFor(record).query,
      issuedAt: Math.floor(Date.now() / 1000),
      expiresAt: record.expiresAt,
    });
    if (issuer) payload.aud = issuer;
    // §5.10: the enc values the wallet supports, of ours (all of ours when it supports none: it then says so)
    const encs = metadata?.authorization_encryption_enc_values_supported;
    if (publicKey && Array.isArray(encs)) {
      const shared = RESPONSE_ENC_VALUES.filter((enc) => encs.includes(enc));
      if (shared.length) payload.client_metadata = { ...payload.client_metadata, encrypted_response_enc_values_supported: shared };
    }
    ctx.type = `application/${REQUEST_OBJECT_TYPE}`;
    ctx.body = await requestObject(opts.clientIdentity, payload);
  }

  /**
   * The parameters of an encrypted Authorization Response (OpenID4VP 1.0 §8.3): the JWE names the request's
   * key by its `kid`; it is decrypted with that key only (jose, ECDH-ES, A128GCM or A256GCM). A JWE that does
   * not decrypt, or that carries another request's state, ends the request whose key it names.
   */
  async function decryptResponse(jwe: string, address: string): Promise<{ params: Record<string, unknown> } | { refusal: { status: number; error: string; description: string } }> {
    let kid: unknown;
    try {
      kid = decodeProtectedHeader(jwe).kid;
    } catch {
      await withinRateLimits(address);
      return { refusal: { status: 400, error: 'invalid_request', description: 'response: not a JWE' } };
    }
    const record = typeof kid === 'string' && KID.test(kid) ? await requests.findByKid(kid) : undefined;
    await withinRateLimits(address, record?.clientId);
    if (!record?.encryptionKey) return { refusal: { status: 400, error: 'invalid_request', description: 'response: the JWE kid names no pending request of this verifier' } };
    const endRequest = async (description: string) => {
      const taken = await requests.takeByState(record.state);
      if (taken) await failed(taken.record, say('refusal.malformed_response'), description);
      return { refusal: { status: 400, error: 'invalid_request', description } };
    };
    let plaintext: Uint8Array;
    try {
      // a KeyObject: node imports a JWK in a third of the time WebCrypto (jose's importJWK) takes
      ({ plaintext } = await compactDecrypt(jwe, createPrivateKey({ key: record.encryptionKey as JsonWebKey, format: 'jwk' }), {
        keyManagementAlgorithms: [RESPONSE_ALG],
        contentEncryptionAlgorithms: RESPONSE_ENC_VALUES,
      }));
    } catch {
      return endRequest('response: the JWE does not decrypt with this request\'s key');
    }
    let params: unknown;
    try {
      params = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(plaintext));
    } catch {
      return endRequest('response: the decrypted response is not a JSON object');
    }
    if (typeof params !== 'object' || params === null || Array.isArray(params)) return endRequest('response: the decrypted response is not a JSON object');
    const state = (params as Record<string, unknown>).state;
    if (state !== record.state) return endRequest('response: the encrypted response carries another request\'s state');
    return { params: params as Record<string, unknown> };
  }

  /** Throws RateLimited over a budget (opts.rateLimits); the error boundary answers 429. */
  async function withinRateLimits(address: string, client?: string): Promise<void> {
    await opts.rateLimits?.consume('vpResponse', { client, address });
  }

  /** `declined`: the wallet answered access_denied (the holder declined), not a refused presentation */
  async function failed(record: VerificationRecord, message: Say, description: string, declined = false): Promise<void> {
    await requests.failed(record.requestId, message, description);
    await opts.onFailed?.(record, { message: ENGLISH.say(message), description, ...(declined ? { declined } : {}) });
  }

  /** OpenID4VP 1.0 §8.2, §8.3: the Authorization Response (or Authorization Error Response), by direct_post or direct_post.jwt. */
  async function takeResponse(ctx: Context): Promise<void> {
    ctx.set('Cache-Control', 'no-store');
    const answer = (status: number, body: Record<string, unknown>) => {
      ctx.status = status;
      ctx.body = typeof body.error_description === 'string' ? { ...body, error_description: safeErrorDescription(body.error_description) } : body;
    };
    if (!ctx.is('application/x-www-form-urlencoded')) {
      throw new ProtocolError('invalid_request', 'the response must be sent as application/x-www-form-urlencoded (response_mode direct_post or direct_post.jwt)');
    }
    const form = await readForm(ctx, RESPONSE_BODY_LIMIT);
    let params: Record<string, unknown> = form;
    const encrypted = form.response !== undefined;
    if (encrypted) {
      const decrypted = await decryptResponse(form.response, ctx.ip);
      if ('refusal' in decrypted) return answer(decrypted.refusal.status, { error: decrypted.refusal.error, error_description: decrypted.refusal.description });
      params = decrypted.params;
    } else {
      await withinRateLimits(ctx.ip);
    }
    const state = params.state;
    if (state === undefined) return answer(400, { error: 'invalid_request', error_description: 'state: required' });
    // one answer per request (D14): the state is consumed before anything else is looked at
    const taken = typeof state === 'string' && OPAQUE.test(state) ? await requests.takeByState(state) : undefined;
    if (!taken) return answer(400, { error: 'invalid_request', error_description: 'state: unknown, expired or already answered: start again from the app' });
    const { record, device } = taken;
    linkToFlow(record.trace);
    // same-device (§8.2): the browser goes back to the holder's page, which finishes (or ends) the flow
    const back = device === 'same' && record.returnUri !== undefined ? record.returnUri : undefined;
    const ended = async (status: number, body: Record<string, unknown>, message: Say, description: string, declined = false) => {
      await failed(record, message, description, declined);
      return answer(status, back ? { ...body, redirect_uri: back } : body);
    };
    try {
      if (params.error !== undefined) {
        // an Authorization Error Response ends the request; it was processed: 200 (§8.2). A wallet that cannot
        // encrypt may send it unencrypted (§8.3.1)
        const code = String(params.error);
        const known = Object.hasOwn(WALLET_ERRORS, code);
        return await ended(200, {}, say(known ? WALLET_ERRORS[code] : 'status.walletError'), known ? `the wallet answered ${code}` : 'the wallet answered with an error', code === 'access_denied');
      }
      if (record.responseMode === 'direct_post.jwt' && !encrypted) {
        const description = 'response: this request asks for an encrypted response (direct_post.jwt); the wallet sent it unencrypted';
        return await ended(400, { error: 'invalid_request', error_description: description }, say('status.unencrypted'), description);
      }
      const { issuerKeys: keys, ...expected } = expectationsFor(record);
      const presentations = readVpToken(params.vp_token, expected.query);
      const publicKey = encrypted && record.encryptionKey ? publicEncryptionKey(record.encryptionKey) : undefined;
      const result = await verifyResponse(
        presentations,
        {
          ...expected,
          clientId,
          nonce: record.nonce,
          responseUri,
          // D12: a PID is trusted by the identity block's issuers alone, never by trust anchors
          ...(record.identity ? {} : { anchorsFor: anchorsOf }),
          // §B.2.6.1: an encrypted response's mdoc is bound to the key it was encrypted to
          ...(publicKey ? { jwkThumbprint: base64url.decode(await calculateJwkThumbprint(publicKey)) } : {}),
        },
        {
          issuerKeys: keys,
          clockTolerance: opts.clockTolerance ?? 30,
          statusChecks,
          onStatusUnavailable: opts.onStatusUnavailable ?? 'refuse',
        },
      );
      if (back) {
        // §8.2, HAIP 1.0: only the browser that comes back with this code completes the flow
        const responseCode = randomBase64url(32);
        await requests.awaitReturn(record, result, responseCode);
        const url = new URL(back);
        url.searchParams.set('response_code', responseCode);
        return answer(200, { redirect_uri: url.href });
      }
      await opts.onVerified?.(record, result);
      await requests.done(record.requestId, result);
      return answer(200, {});
    } catch (err) {
      if (err instanceof VerificationRefusal) {
        return await ended(400, { error: err.error, error_description: err.message }, personMessage(err.reason), `the presentation was refused: ${err.message}`);
      }
      await failed(record, say('status.checkFailed'), 'the presentation could not be checked');
      throw err;
    }
  }

  async function completeReturn(requestId: string, responseCode: string): Promise<ReturnOutcome> {
    const redeemed = OPAQUE.test(responseCode) ? await requests.redeem(requestId, responseCode) : undefined;
    if (!redeemed) {
      const record = await requests.find(requestId);
      const status = await requests.status(requestId);
      // a code for a request that is waiting for it, but the wrong one: the code was taken, the request ends
      if (record && status.status === 'returning') {
        await failed(record, say('status.otherWallet'), 'response_code: not the code the wallet was given for this request');
      }
      return 'refused';
    }
    await opts.onVerified?.(redeemed.record, redeemed.result);
    await requests.done(requestId, redeemed.result);
    return 'completed';
  }

  const middleware = router([
    // not HEAD: fetching the Request Object uses it up
    { method: 'GET', head: false, path: new RegExp(`^${requestPath}([^/]*)$`), handle: (ctx, [reference]) => serveRequestObject(ctx, reference, false) },
    { method: 'POST', path: new RegExp(`^${requestPath}([^/]*)$`), handle: (ctx, [reference]) => serveRequestObject(ctx, reference, true) },
    { method: 'POST', path: responsePath, handle: takeResponse },
  ]);

  return {
    clientId,
    middleware,
    createRequest,
    requestStatus: (requestId) => requests.status(requestId),
    result: (requestId) => requests.result(requestId),
    completeReturn,
  };
}

/** The public half of a request's encryption key, as `client_metadata.jwks` publishes it. */
function publicEncryptionKey({ d: _d, ...rest }: JWK): JWK {
  return rest;
}
