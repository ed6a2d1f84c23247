import type { CredentialType } from '../config/schema.js';
import type { RateLimits } from '../http/rateLimits.js';
import type { AnchorFormat } from '../keys/trustAnchors.js';
import type { ClientIdentity } from './clientIdentity.js';
import type { DcqlQuery } from './dcql.js';
import type { VerifierInfo } from './registration.js';
import type { IssuerKeys } from './issuerKeys.js';
import type { VerificationRecord } from './record.js';
import type { VerificationRequests } from './requests.js';
import type { ResponseExpectations } from './response.js';
import type { StatusChecks } from './statusCheck.js';
import type { IdentityRequestKind, VerifierOptions } from './types.js';

/** What a request asks for (its DCQL query), which claims it reads, and whose credentials it accepts. */
export type Expectations = Pick<
  ResponseExpectations,
  'query' | 'claimNames' | 'mdocNamespaces' | 'typeNames' | 'claimElements' | 'subjectClaim'
> & { issuerKeys: IssuerKeys };

/**
 * What the verifier's handlers (src/verification/actions) work with, built once by createVerifier: each
 * handler takes these explicitly rather than reading the options of a closure.
 */
export interface VerifierDeps {
  clientIdentity: ClientIdentity;
  /** the base URL's origin: the page that asks through the Digital Credentials API, and its answers' audience */
  origin: string;
  /** `<base URL>/vp/response`: the response_uri */
  responseUri: string;
  /** `<base URL>/vp/request/`: a request_uri is this and a reference */
  requestUriBase: string;
  /** seconds a request (and its request_uri) lives */
  requestLifetime: number;
  requests: VerificationRequests;
  /** the configured credential types, by name */
  credentialTypes: ReadonlyMap<string, CredentialType>;
  /** D12: the person-identification request, when configured */
  identity?: IdentityRequestKind;
  expectationsFor(record: VerificationRecord): Expectations;
  /** OpenID4VP 1.0 §5.1 `verifier_info` of a request: the registration certificate of its client, when it has one */
  verifierInfoFor(record: VerificationRecord, query: DcqlQuery): VerifierInfo[] | undefined;
  /** the DER roots that may vouch for a credential type in a format */
  anchorsFor(format: AnchorFormat, type: string): Uint8Array[];
  /** D12: the IACAs that may vouch for a PID as an mdoc (anchors naming VerifiedIdentity); none for an SD-JWT VC PID */
  pidAnchorsFor(format: AnchorFormat): Uint8Array[];
  /** D18: the status lists of presented credentials, cached for their ttl across requests */
  statusChecks: StatusChecks;
  /** seconds of clock skew accepted on credential and key binding times */
  clockTolerance: number;
  onStatusUnavailable: 'refuse' | 'accept';
  ownMdocStatus: VerifierOptions['ownMdocStatus'];
  onVerified: VerifierOptions['onVerified'];
  onFailed: VerifierOptions['onFailed'];
  rateLimits?: RateLimits;
}
