import { router } from '../http/router.js';
import { anchorsFor, isOwnVct, pidMdocAnchors, type AnchorFormat } from '../keys/trustAnchors.js';
import { subjectKeyIdentifier } from '../keys/x509.js';
import { vctFor } from '../issuance/credentialConfigurations.js';
import { completeReturn } from './actions/completeReturn.js';
import { createRequest } from './actions/createRequest.js';
import { dcApiRequestFor, takeDcApiAnswer } from './actions/dcApi.js';
import { serveRequestObject } from './actions/requestObject.js';
import { takeResponse } from './actions/response.js';
import { endRefused } from './actions/outcomes.js';
import type { VerifierDeps } from './deps.js';
import { expectationsFor } from './expectations.js';
import { IssuerKeys } from './issuerKeys.js';
import { VerificationRequests } from './requests.js';
import { StatusChecks } from './statusCheck.js';
import type { Verifier, VerifierOptions } from './types.js';

export type { RequestStatus, VerificationResult } from './record.js';
export type { DcApiRequest } from './dcApi.js';
export type { DcApiOutcome } from './actions/dcApi.js';
export type {
  CreatedRequest,
  CreateRequestInput,
  IdentityRequestKind,
  ReturnOutcome,
  Verifier,
  VerifierOptions,
} from './types.js';

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
  const deps = verifierDeps(opts);
  const basePath = new URL(opts.baseUrl).pathname.replace(/\/$/, '');
  const requestPath = new RegExp(`^${basePath}/vp/request/([^/]*)$`);
  const middleware = router([
    // not HEAD: fetching the Request Object uses it up
    {
      method: 'GET',
      head: false,
      path: requestPath,
      handle: (ctx, [reference]) => serveRequestObject(deps, ctx, reference, false),
    },
    { method: 'POST', path: requestPath, handle: (ctx, [reference]) => serveRequestObject(deps, ctx, reference, true) },
    { method: 'POST', path: `${basePath}/vp/response`, handle: (ctx) => takeResponse(deps, ctx) },
  ]);
  return {
    clientId: deps.clientIdentity.clientId,
    middleware,
    createRequest: (input) => createRequest(deps, input),
    requestStatus: (requestId) => deps.requests.status(requestId),
    result: (requestId) => deps.requests.result(requestId),
    completeReturn: (requestId, responseCode) => completeReturn(deps, requestId, responseCode),
    retire: (requestId) => deps.requests.retire(requestId),
    finished: (requestId, ttlSeconds) => deps.requests.finished(requestId, ttlSeconds),
    endRefused: (requestId) => endRefused(deps, requestId),
    dcApiRequests: (requestId) => dcApiRequestFor(deps, requestId),
    takeDcApiAnswer: (requestId, answer, address) => takeDcApiAnswer(deps, requestId, answer, address),
  };
}

/** The handlers' dependencies, from the options: the request store, the issuers' keys, the trust anchors by type. */
function verifierDeps(opts: VerifierOptions): VerifierDeps {
  const baseUrl = opts.baseUrl.replace(/\/$/, '');
  const credentialTypes = new Map(opts.credentialTypes.map((t) => [t.name, t]));
  // a type of our own vct namespace is never vouched for by a foreign chain
  const ownTypes = new Set(
    opts.credentialTypes.filter((t) => isOwnVct(vctFor(t, opts.baseUrl), opts.baseUrl)).map((t) => t.name),
  );
  const pidAnchors = pidMdocAnchors(opts.clientIdentity.trustAnchors);
  const anchorsOf = (format: AnchorFormat, type: string) =>
    anchorsFor(opts.clientIdentity.trustAnchors, format, type, ownTypes.has(type));
  // OpenID4VP 1.0 §6.1.1.1: a type's mdoc query names the roots that may vouch for it by their key identifier
  const aki = (type: string) =>
    anchorsOf('mso_mdoc', type)
      .map(subjectKeyIdentifier)
      .filter((v): v is string => v !== undefined);
  // HAIP 1.0 §5: a type's SD-JWT VC query names its anchors too, when nothing else may vouch for it: a type
  // of our own namespace has none, and trustedIssuers are trusted by iss, with no certificate a wallet could
  // match. Our own issuer may sign any configured type, under the issuer CA it made, which is named beside
  // them; without such a CA (the operator's certificate, or none) a wallet could not match ours: none named.
  const ownCaKeyId = opts.ownIssuer.issuerCa && subjectKeyIdentifier(opts.ownIssuer.issuerCa);
  const sdJwtAki = (type: string) => {
    const anchors = anchorsOf('dc+sd-jwt', type);
    if (anchors.length === 0 || opts.trustedIssuers.length > 0 || !ownCaKeyId) return [];
    const ids = anchors.map(subjectKeyIdentifier);
    if (ids.some((id) => id === undefined)) return [];
    return [...new Set([...(ids as string[]), ownCaKeyId])];
  };
  const issuerKeys = new IssuerKeys({
    ownIssuer: opts.ownIssuer,
    trustedIssuers: opts.trustedIssuers,
    outbound: opts.outbound,
  });
  // D12: a PID is accepted from the identity block's issuers only, never from the credential issuers
  const identity = opts.identity && {
    kind: opts.identity,
    issuerKeys: new IssuerKeys({ trustedIssuers: opts.identity.trustedIssuers, outbound: opts.outbound }),
  };
  const sources = {
    baseUrl: opts.baseUrl,
    credentialTypes,
    issuerKeys,
    aki,
    sdJwtAki,
    ...(identity ? { identity } : {}),
  };
  return {
    clientIdentity: opts.clientIdentity,
    origin: new URL(baseUrl).origin,
    responseUri: `${baseUrl}/vp/response`,
    requestUriBase: `${baseUrl}/vp/request/`,
    requestLifetime: opts.requestLifetime,
    requests: new VerificationRequests(opts.store, opts.freshRequestAfter),
    credentialTypes,
    ...(opts.identity ? { identity: opts.identity } : {}),
    expectationsFor: (record) => expectationsFor(record, sources),
    verifierInfoFor: (record, query) => opts.registrations?.verifierInfo(record.clientId, query),
    anchorsFor: anchorsOf,
    pidAnchorsFor: (format) => (format === 'mso_mdoc' ? pidAnchors : []),
    // D18: status lists of presented credentials, cached for their ttl across requests
    statusChecks: new StatusChecks(opts.outbound, opts.statusListMaxEntries),
    clockTolerance: opts.clockTolerance ?? 30,
    onStatusUnavailable: opts.onStatusUnavailable ?? 'refuse',
    ownMdocStatus: opts.ownMdocStatus,
    onVerified: opts.onVerified,
    onFailed: opts.onFailed,
    ...(opts.rateLimits ? { rateLimits: opts.rateLimits } : {}),
  };
}
