import type { JWK } from 'jose';
import type { Context, Middleware } from 'koa';
import type { CredentialType, TrustedIssuer } from '../config/schema.js';
import { readForm } from '../http/form.js';
import { router } from '../http/router.js';
import { ProtocolError } from '../rules/errors.js';
import type { Store } from '../store/types.js';
import { dcqlQueryFor } from './dcql.js';
import { personMessage, VerificationRefusal } from './errors.js';
import { IssuerKeys } from './issuerKeys.js';
import { authorizationRequestPayload, REQUEST_OBJECT_TYPE, unsignedRequestObject, walletUriFor } from './requestObject.js';
import { VerificationRequests, type RequestStatus, type VerificationRecord, type VerificationResult } from './requests.js';
import { readVpToken, RESPONSE_BODY_LIMIT, verifyResponse } from './response.js';
import { randomBase64url } from '../random.js';

export type { RequestStatus, VerificationResult } from './requests.js';

export interface VerifierOptions {
  /** e.g. https://vc.example.com (no trailing slash) */
  baseUrl: string;
  store: Store;
  credentialTypes: CredentialType[];
  /** from config */
  trustedIssuers: TrustedIssuer[];
  /** this service's wallet issuer and its PUBLIC credential keys */
  ownIssuer: { issuer: string; jwks: { keys: JWK[] } };
  /** seconds a request (and its request_uri) lives */
  requestLifetime: number;
  /** seconds of clock skew accepted on credential and key binding times, default 30 */
  clockTolerance?: number;
  /** for remote key sets (tests may pass their own) */
  fetch?: typeof fetch;
  /**
   * Called with a verified presentation, before the request shows `done`: the holder's prompt finishes
   * the authorisation from here, so that the browser can go straight back to the provider.
   */
  onVerified?: (record: VerificationRecord, result: VerificationResult) => Promise<void>;
  /** Called when a request fails for good (the wallet declined, or the presentation was refused), with the holder's message. */
  onFailed?: (record: VerificationRecord, message: string) => Promise<void>;
}

export interface Verifier {
  /** the verifier's client identifier, the KB-JWT aud */
  clientId: string;
  /** serves GET request_uri and POST response_uri; next() otherwise */
  middleware: Middleware;
  createRequest(input: { requestId: string; credentialTypes: string[]; external?: boolean }): Promise<{ walletUri: string; expiresAt: number /* epoch s */ }>;
  requestStatus(requestId: string): Promise<RequestStatus>;
  /** available once status is done */
  result(requestId: string): Promise<VerificationResult | undefined>;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,200}$/;
/** Request object references and states: 256 random bits, base64url. */
const OPAQUE = /^[A-Za-z0-9_-]{43}$/;

/** Wallet error codes (OpenID4VP 1.0 §8.5, RFC 6749 §4.1.2.1) as the holder reads them. */
const WALLET_ERRORS: Record<string, string> = {
  access_denied: 'The request was declined in the wallet, or the wallet has no matching credential.',
  vp_formats_not_supported: 'The wallet does not support the credential format that was asked for.',
  wallet_unavailable: 'The wallet is not available.',
};

/**
 * The wallet-facing side of verification (D10): OpenID4VP 1.0, DCQL, `response_mode=direct_post`, request
 * passed by reference. Client Identifier Prefix `redirect_uri` (§5.9.3): the client_id is
 * `redirect_uri:<response_uri>`, the Request Object is unsigned and carries `client_metadata`.
 *
 * Paths, under the base URL: GET `/vp/request/<reference>` serves the Request Object (once), POST
 * `/vp/response` takes the Authorization Response, identified by its `state` (unguessable, not the requestId).
 */
export function createVerifier(opts: VerifierOptions): Verifier {
  const base = new URL(opts.baseUrl);
  const basePath = base.pathname.replace(/\/$/, '');
  const requestPath = `${basePath}/vp/request/`;
  const responsePath = `${basePath}/vp/response`;
  const responseUri = `${opts.baseUrl.replace(/\/$/, '')}/vp/response`;
  const requestUriBase = `${opts.baseUrl.replace(/\/$/, '')}/vp/request/`;
  // OpenID4VP 1.0 §5.9.3: with the redirect_uri prefix, the identifier is the Response URI for direct_post
  const clientId = `redirect_uri:${responseUri}`;

  const types = new Map(opts.credentialTypes.map((t) => [t.name, t]));
  const requests = new VerificationRequests(opts.store);
  const issuerKeys = new IssuerKeys({ ownIssuer: opts.ownIssuer, trustedIssuers: opts.trustedIssuers, fetch: opts.fetch });
  const presentationContext = () => ({ issuerKeys, clockTolerance: opts.clockTolerance ?? 30, fetch: opts.fetch });

  function requestedTypes(names: string[]): CredentialType[] {
    return names.map((name) => types.get(name)!);
  }

  async function createRequest(input: { requestId: string; credentialTypes: string[]; external?: boolean }) {
    if (!REQUEST_ID.test(input.requestId)) throw new TypeError('requestId must be 1-200 letters, digits, ".", "_" or "-"');
    if (input.credentialTypes.length === 0) throw new TypeError('at least one credential type must be requested');
    if (new Set(input.credentialTypes).size !== input.credentialTypes.length) throw new TypeError('a credential type is requested twice');
    for (const name of input.credentialTypes) if (!types.has(name)) throw new TypeError(`unknown credential type ${name}`);

    const createdAt = Math.floor(Date.now() / 1000);
    const record: VerificationRecord = {
      requestId: input.requestId,
      credentialTypes: [...input.credentialTypes],
      nonce: randomBase64url(32),
      state: randomBase64url(32),
      createdAt,
      expiresAt: createdAt + opts.requestLifetime,
      ...(input.external ? { external: true } : {}),
    };
    const reference = randomBase64url(32);
    await requests.create(record, reference);
    return { walletUri: walletUriFor(clientId, `${requestUriBase}${reference}`), expiresAt: record.expiresAt };
  }

  /** RFC 9101 §5.2.3: the Request Object, `application/oauth-authz-req+jwt`. */
  async function serveRequestObject(ctx: Context, reference: string): Promise<void> {
    ctx.set('Cache-Control', 'no-store');
    const record = OPAQUE.test(reference) ? await requests.takeRequestObject(reference) : undefined;
    if (!record) {
      ctx.status = 404;
      ctx.body = { error: 'invalid_request_uri', error_description: 'request_uri: unknown, expired or already retrieved' };
      return;
    }
    const payload = authorizationRequestPayload({
      clientId,
      responseUri,
      nonce: record.nonce,
      state: record.state,
      dcqlQuery: dcqlQueryFor(requestedTypes(record.credentialTypes), opts.baseUrl),
      issuedAt: Math.floor(Date.now() / 1000),
      expiresAt: record.expiresAt,
    });
    ctx.type = `application/${REQUEST_OBJECT_TYPE}`;
    ctx.body = unsignedRequestObject(payload);
  }

  /** OpenID4VP 1.0 §8.2: the Authorization Response (or Authorization Error Response) by direct_post. */
  async function takeResponse(ctx: Context): Promise<void> {
    ctx.set('Cache-Control', 'no-store');
    const answer = (status: number, body: Record<string, unknown>) => {
      ctx.status = status;
      ctx.body = body;
    };
    if (!ctx.is('application/x-www-form-urlencoded')) {
      throw new ProtocolError('invalid_request', 'the response must be sent as application/x-www-form-urlencoded (response_mode direct_post)');
    }
    const form = await readForm(ctx, RESPONSE_BODY_LIMIT);
    const state = form.state;
    if (state === undefined) return answer(400, { error: 'invalid_request', error_description: 'state: required' });
    // one answer per request (D14): the state is consumed before anything else is looked at
    const record = OPAQUE.test(state) ? await requests.takeByState(state) : undefined;
    if (!record) return answer(400, { error: 'invalid_request', error_description: 'state: unknown, expired or already answered' });

    const failed = async (message: string) => {
      await requests.failed(record.requestId, message);
      await opts.onFailed?.(record, message);
    };
    try {
      if (form.error !== undefined) {
        // an Authorization Error Response from the wallet ends the request; it was processed: 200 (§8.2)
        await failed(WALLET_ERRORS[form.error] ?? 'The wallet could not answer the request.');
        return answer(200, {});
      }
      const requested = requestedTypes(record.credentialTypes);
      const query = dcqlQueryFor(requested, opts.baseUrl);
      const presentations = readVpToken(form.vp_token, query);
      const result = await verifyResponse(
        presentations,
        { query, types: new Map(requested.map((t) => [t.name, t])), clientId, nonce: record.nonce },
        presentationContext(),
      );
      await opts.onVerified?.(record, result);
      await requests.done(record.requestId, result);
      return answer(200, {});
    } catch (err) {
      if (err instanceof VerificationRefusal) {
        await failed(personMessage(err.reason));
        return answer(400, { error: err.error, error_description: err.message });
      }
      await failed('Something went wrong while checking the credentials. Please try again.');
      throw err;
    }
  }

  const middleware = router([
    // not HEAD: fetching the Request Object uses it up
    { method: 'GET', head: false, path: new RegExp(`^${requestPath}([^/]*)$`), handle: (ctx, [reference]) => serveRequestObject(ctx, reference) },
    { method: 'POST', path: responsePath, handle: takeResponse },
  ]);

  return {
    clientId,
    middleware,
    createRequest,
    requestStatus: (requestId) => requests.status(requestId),
    result: (requestId) => requests.result(requestId),
  };
}
