import type { JWK } from 'jose';
import type { Context, Middleware } from 'koa';
import type { CredentialType, TrustedIssuer } from '../config/schema.js';
import { readForm } from '../http/form.js';
import { router } from '../http/router.js';
import { ProtocolError } from '../rules/errors.js';
import type { Store } from '../store/types.js';
import { dcqlQueryFor, type DcqlQuery } from './dcql.js';
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
  /** Called when a request fails for good (the wallet declined, or the presentation was refused), with the holder's message and the relying party's description. */
  onFailed?: (record: VerificationRecord, failure: { message: string; description: string }) => Promise<void>;
  /** D12: what a request for a person-identification credential asks for, and whose credentials it accepts */
  identity?: IdentityRequestKind;
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
} & ({ credentialTypes: string[]; identity?: undefined } | { identity: 'VerifiedIdentity'; credentialTypes?: undefined });

export interface Verifier {
  /** the verifier's client identifier, the KB-JWT aud */
  clientId: string;
  /** serves GET request_uri and POST response_uri; next() otherwise */
  middleware: Middleware;
  createRequest(input: CreateRequestInput): Promise<{ walletUri: string; expiresAt: number /* epoch s */ }>;
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
  // D12: a PID is accepted from the identity block's issuers only, never from the credential issuers
  const identityIssuerKeys = opts.identity && new IssuerKeys({ trustedIssuers: opts.identity.trustedIssuers, fetch: opts.fetch });

  /** What a request asks for, whose credentials it accepts, and which claims it reads. */
  function expectationsFor(record: VerificationRecord): { query: DcqlQuery; claimNames: ReadonlyMap<string, readonly string[]>; subjectClaim?: string; issuerKeys: IssuerKeys } {
    if (record.identity) {
      if (!opts.identity || !identityIssuerKeys) throw new Error('identity requests are not configured');
      return { ...opts.identity, issuerKeys: identityIssuerKeys };
    }
    const requested = record.credentialTypes.map((name) => types.get(name)!);
    return { query: dcqlQueryFor(requested, opts.baseUrl), claimNames: new Map(requested.map((t) => [t.name, Object.keys(t.attributes)])), issuerKeys };
  }

  async function createRequest(input: CreateRequestInput) {
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
      dcqlQuery: expectationsFor(record).query,
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

    const failed = async (message: string, description: string) => {
      await requests.failed(record.requestId, message, description);
      await opts.onFailed?.(record, { message, description });
    };
    try {
      if (form.error !== undefined) {
        // an Authorization Error Response from the wallet ends the request; it was processed: 200 (§8.2)
        const known = Object.hasOwn(WALLET_ERRORS, form.error);
        await failed(known ? WALLET_ERRORS[form.error] : 'The wallet could not answer the request.', known ? `the wallet answered ${form.error}` : 'the wallet answered with an error');
        return answer(200, {});
      }
      const { issuerKeys: keys, ...expected } = expectationsFor(record);
      const presentations = readVpToken(form.vp_token, expected.query);
      const result = await verifyResponse(presentations, { ...expected, clientId, nonce: record.nonce }, { issuerKeys: keys, clockTolerance: opts.clockTolerance ?? 30, fetch: opts.fetch });
      await opts.onVerified?.(record, result);
      await requests.done(record.requestId, result);
      return answer(200, {});
    } catch (err) {
      if (err instanceof VerificationRefusal) {
        await failed(personMessage(err.reason), `the presentation was refused: ${err.message}`);
        return answer(400, { error: err.error, error_description: err.message });
      }
      await failed('Something went wrong while checking the credentials. Please try again.', 'the presentation could not be checked');
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
