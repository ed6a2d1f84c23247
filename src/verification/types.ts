// The verifier's options and its interface to the rest of the service (createVerifier, verifier.ts).
import type { OutboundFetch } from '../http/outboundFetch.js';
import type { Middleware } from 'koa';
import type { CredentialType, TrustedIssuer } from '../config/schema.js';
import type { RateLimits } from '../http/rateLimits.js';
import type { Store } from '../store/types.js';
import type { CredentialStatus } from '../status/registry.js';
import type { ClientIdentity } from './clientIdentity.js';
import type { DcqlQuery } from './dcql.js';
import type { DcApiRequest } from './dcApi.js';
import type { DcApiOutcome } from './actions/dcApi.js';
import type { OwnIssuer } from './issuerKeys.js';
import type { Registrations } from './registration.js';
import type { RequestStatus, VerificationRecord, VerificationResult } from './record.js';

export interface VerifierOptions {
  /** e.g. https://vc.example.com (no trailing slash) */
  baseUrl: string;
  store: Store;
  credentialTypes: CredentialType[];
  /** from config */
  trustedIssuers: TrustedIssuer[];
  /** this service's wallet issuer: its PUBLIC credential keys, and the local issuer CA when there is one */
  ownIssuer: OwnIssuer;
  /** how the verifier identifies itself (`verifier` config, src/verification/clientIdentity.ts) */
  clientIdentity: ClientIdentity;
  /** seconds a request (and its request_uri) lives */
  requestLifetime: number;
  /** seconds a wallet may hold a fetched request unanswered before the holder is offered a fresh one, default 30 */
  freshRequestAfter?: number;
  /** seconds of clock skew accepted on credential and key binding times, default 30 */
  clockTolerance?: number;
  /** fetches of issuer metadata, key sets and status lists, under the operator's outbound rules (src/http/outboundFetch.ts) */
  outbound?: OutboundFetch;
  /**
   * Called with a verified presentation, before the request shows `done` (same-device: once the browser is
   * back with its response code): the holder's prompt finishes the authorisation from here.
   */
  onVerified?: (record: VerificationRecord, result: VerificationResult) => Promise<void>;
  /** Called when a request fails for good (the wallet declined, or the presentation was refused), with the holder's message and the relying party's description. */
  onFailed?: (
    record: VerificationRecord,
    failure: { message: string; description: string; declined?: boolean },
  ) => Promise<void>;
  /** D12: what a request for a person-identification credential asks for, and whose credentials it accepts */
  identity?: IdentityRequestKind;
  /** D18 `statusList.onUnavailable` (default refuse) */
  onStatusUnavailable?: 'refuse' | 'accept';
  /** D18: the status of an mdoc this service issued, by its MSO's digest (src/status/registry.ts `mdocStatus`) */
  ownMdocStatus?: (msoDigest: string) => Promise<CredentialStatus | undefined>;
  /** `statusList.maxEntries`: a larger status list is refused (default 16 Mi) */
  statusListMaxEntries?: number;
  /**
   * `vpResponse`: every response read consumes its address's budget, and the budget of the request's relying
   * party when the record names one and is read before the state is taken (an encrypted response, found by
   * its key's `kid`); an unencrypted response names its request only by the state it consumes, so it counts
   * per address only. Both before anything is decrypted, taken or verified.
   */
  rateLimits?: RateLimits;
  /**
   * ETSI TS 119 475: the relying parties' registration certificates; a request made for a client that has
   * one carries it in `verifier_info` (OpenID4VP 1.0 §5.1), QR and Digital Credentials API alike
   */
  registrations?: Registrations;
}

/** A request for a person-identification credential (D12): its own query, and its own trusted issuers only. */
export interface IdentityRequestKind {
  query: DcqlQuery;
  /** per Credential Query id, the claims that go into the result */
  claimNames: ReadonlyMap<string, readonly string[]>;
  /** the PID as an mdoc: its query's namespace, the type its anchors are asked for, and the elements its claims are read from */
  mdocNamespaces?: ReadonlyMap<string, string>;
  typeNames?: ReadonlyMap<string, string>;
  claimElements?: ReadonlyMap<string, ReadonlyMap<string, string>>;
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
} & (
  { credentialTypes: string[]; identity?: undefined } | { identity: 'VerifiedIdentity'; credentialTypes?: undefined }
);

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
  /** a stalled or refused request makes way for a fresh one: true when this call retired it */
  retire(requestId: string): Promise<boolean>;
  /** the holder's browser finished its flow with the request's outcome: what it read is kept only `ttlSeconds` more */
  finished(requestId: string, ttlSeconds: number): Promise<void>;
  /** the holder gives up on a refused request: it fails as its refusal said */
  endRefused(requestId: string): Promise<void>;
  /** OpenID4VP 1.0 Appendix A: the Digital Credentials API requests of a pending request (signed first), undefined once it is over */
  dcApiRequests(requestId: string): Promise<DcApiRequest[] | undefined>;
  /** the credential the holder's page got through the Digital Credentials API, from `address`: verified, refused (the request ends), or gone */
  takeDcApiAnswer(requestId: string, answer: unknown, address: string): Promise<DcApiOutcome>;
}
