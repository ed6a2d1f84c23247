import type { JWK } from 'jose';
import type { ClientIdentity } from './clientIdentity.js';
import type { DcqlQuery } from './dcql.js';
import type { VerifierInfo } from './registration.js';
import { clientMetadata, requestObject, STATIC_DISCOVERY_AUDIENCE } from './requestObject.js';

/**
 * OpenID4VP 1.0 Appendix A (OpenID4VP over the W3C Digital Credentials API), as pure functions: the
 * requests the holder's page hands to `navigator.credentials.get`, and what an answer must be bound to.
 */

/** A.1: the exchange protocols offered, signed first (HAIP 1.0), then unsigned for wallets that take no signed requests. */
export const DC_API_SIGNED = 'openid4vp-v1-signed';
export const DC_API_UNSIGNED = 'openid4vp-v1-unsigned';
export const DC_API_PROTOCOLS: readonly string[] = [DC_API_SIGNED, DC_API_UNSIGNED];

export type DcApiResponseMode = 'dc_api' | 'dc_api.jwt';

/** A.2: the answer comes back through the browser; encrypted (`dc_api.jwt`, HAIP 1.0 §5.2) unless the operator chose plain answers. */
export const dcApiResponseMode = (mode: 'direct_post' | 'direct_post.jwt'): DcApiResponseMode =>
  mode === 'direct_post.jwt' ? 'dc_api.jwt' : 'dc_api';

/**
 * A.4: the audience of a presentation made through the DC API is the origin the browser asserted, prefixed
 * `origin:`, for signed requests too (never the client_id): the KB-JWT `aud`.
 */
export const originAudience = (origin: string): string => `origin:${origin}`;

/** One entry of `navigator.credentials.get({ digital: { requests } })`. */
export interface DcApiRequest {
  protocol: string;
  data: Record<string, unknown>;
}

export interface DcApiRequestInput {
  /** the verifier's client identifier, with its prefix */
  clientId: string;
  /** the base URL's origin: the page's, the one wallets are told to expect */
  origin: string;
  responseMode: 'direct_post' | 'direct_post.jwt';
  /** the request's public encryption key (dc_api.jwt) */
  encryptionKey?: JWK;
  nonce: string;
  dcqlQuery: DcqlQuery;
  /** OpenID4VP 1.0 §5.1: attestations about the verifier (the relying party's registration certificate) */
  verifierInfo?: VerifierInfo[];
  /** epoch seconds */
  issuedAt: number;
  /** epoch seconds */
  expiresAt: number;
}

/**
 * A.2 and A.3.1: the Authorization Request's parameters through the DC API. No `response_uri`, `redirect_uri`
 * or `state`: the answer goes back to the page that asked. An unsigned request carries no `client_id` (the
 * wallet takes the origin as the client); a signed one names the client and the origins it may be used from.
 */
export function dcApiRequestPayload(input: DcApiRequestInput, signed: boolean): Record<string, unknown> {
  return {
    response_type: 'vp_token',
    response_mode: dcApiResponseMode(input.responseMode),
    nonce: input.nonce,
    dcql_query: input.dcqlQuery,
    client_metadata: clientMetadata(input.encryptionKey),
    // signed and unsigned alike: the wallet shows who asks and checks the request against the registration
    ...(input.verifierInfo ? { verifier_info: input.verifierInfo } : {}),
    ...(signed
      ? {
          client_id: input.clientId,
          expected_origins: [input.origin],
          // §5.8: the verifier does not know which wallet the platform will choose
          aud: STATIC_DISCOVERY_AUDIENCE,
          iat: input.issuedAt,
          exp: input.expiresAt,
        }
      : {}),
  };
}

/**
 * The `requests` array (A.3): the signed request first, as a JAR signed as the QR path's Request Object is
 * (A.3.2: `data.request`), when the verifier's identity can sign; then the unsigned one.
 */
export async function dcApiRequests(identity: ClientIdentity, input: DcApiRequestInput): Promise<DcApiRequest[]> {
  const unsigned = { protocol: DC_API_UNSIGNED, data: dcApiRequestPayload(input, false) };
  if (!identity.signer) return [unsigned];
  const request = await requestObject(identity, dcApiRequestPayload(input, true));
  return [{ protocol: DC_API_SIGNED, data: { request } }, unsigned];
}
