import { base64url } from 'jose';
import type { DcqlQuery } from './dcql.js';
import { ISSUER_ALGS, KB_ALGS } from './presentation.js';

/** OpenID4VP 1.0 §5 / RFC 9101 §10.2: the media type of a Request Object and its `typ`. */
export const REQUEST_OBJECT_TYPE = 'oauth-authz-req+jwt';

/**
 * OpenID4VP 1.0 §11.1 and §B.3.4: Verifier metadata for SD-JWT VC, sent in `client_metadata` (required for
 * the `redirect_uri` Client Identifier Prefix, §5.9.3).
 */
export function clientMetadata() {
  return {
    vp_formats_supported: {
      'dc+sd-jwt': { 'sd-jwt_alg_values': [...ISSUER_ALGS], 'kb-jwt_alg_values': [...KB_ALGS] },
    },
  };
}

export interface RequestObjectInput {
  clientId: string;
  responseUri: string;
  nonce: string;
  state: string;
  dcqlQuery: DcqlQuery;
  /** epoch seconds */
  issuedAt: number;
  /** epoch seconds */
  expiresAt: number;
}

/**
 * OpenID4VP 1.0 §5.8: a Request Object's `aud` when the Verifier does not know the Wallet (Static Discovery,
 * the `openid4vp://` scheme of §13.1.2).
 */
export const STATIC_DISCOVERY_AUDIENCE = 'https://self-issued.me/v2';

/** The Authorization Request parameters (OpenID4VP 1.0 §5.1, §8.2 for `direct_post`), as Request Object claims. */
export function authorizationRequestPayload(input: RequestObjectInput) {
  return {
    aud: STATIC_DISCOVERY_AUDIENCE,
    response_type: 'vp_token',
    response_mode: 'direct_post',
    client_id: input.clientId,
    response_uri: input.responseUri,
    nonce: input.nonce,
    state: input.state,
    dcql_query: input.dcqlQuery,
    client_metadata: clientMetadata(),
    iat: input.issuedAt,
    exp: input.expiresAt,
  };
}

/**
 * The Request Object served at the request_uri: an unsigned JWT (RFC 7519 §6, `alg: none`, empty signature)
 * with `typ: oauth-authz-req+jwt`. The `redirect_uri` Client Identifier Prefix cannot sign its requests
 * (OpenID4VP 1.0 §5.9.3: the Wallet has no way to obtain a trusted key), and JAR (RFC 9101) allows an
 * unsigned Request Object unless the wallet requires signed ones. OpenID4VP 1.0 §8.2 shows exactly this
 * combination (`redirect_uri:` client_id, `direct_post`, passed by `request_uri`); openid/OpenID4VP#788
 * states it in the Request URI Response section.
 */
export function unsignedRequestObject(payload: Record<string, unknown>): string {
  const header = { alg: 'none', typ: REQUEST_OBJECT_TYPE };
  return `${base64url.encode(JSON.stringify(header))}.${base64url.encode(JSON.stringify(payload))}.`;
}

/**
 * What the QR code and the same-device link carry: the Client Identifier and the Request URI, nothing else
 * (OpenID4VP 1.0 §3.2 and §5, RFC 9101 §5.2), on the `openid4vp://` scheme (OpenID4VP 1.0 §13.1.2).
 */
export function walletUriFor(clientId: string, requestUri: string): string {
  return `openid4vp://?client_id=${encodeURIComponent(clientId)}&request_uri=${encodeURIComponent(requestUri)}`;
}
