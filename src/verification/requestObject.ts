import { base64url, SignJWT, type JWK } from 'jose';
import type { ClientIdentity } from './clientIdentity.js';
import type { DcqlQuery } from './dcql.js';
import type { VerifierInfo } from './registration.js';
import { MDOC_FORMAT, SD_JWT_VC_FORMAT } from '../rules/formats.js';
import { MDOC_DEVICE_AUTH_ALGS, MDOC_ISSUER_AUTH_ALGS } from './mdoc.js';
import { ISSUER_ALGS, KB_ALGS } from './presentation.js';

/** OpenID4VP 1.0 §5 / RFC 9101 §10.2: the media type of a Request Object and its `typ`. */
export const REQUEST_OBJECT_TYPE = 'oauth-authz-req+jwt';

/** The content encryption algorithms of encrypted responses (HAIP 1.0: A128GCM and A256GCM). */
export const RESPONSE_ENC_VALUES = ['A128GCM', 'A256GCM'];
/** The one key agreement algorithm of encrypted responses (HAIP 1.0: ECDH-ES on P-256). */
export const RESPONSE_ALG = 'ECDH-ES';

/**
 * OpenID4VP 1.0 §11.1, §B.2.4 and §B.3.4: the Verifier metadata sent in `client_metadata` (every prefix this
 * service uses takes its metadata from there, §5.9.3). For an encrypted response (§8.3), the request's own
 * public key and the `enc` values accepted.
 */
export function clientMetadata(encryptionKey?: JWK) {
  return {
    vp_formats_supported: {
      [SD_JWT_VC_FORMAT]: { 'sd-jwt_alg_values': [...ISSUER_ALGS], 'kb-jwt_alg_values': [...KB_ALGS] },
      [MDOC_FORMAT]: {
        issuerauth_alg_values: [...MDOC_ISSUER_AUTH_ALGS],
        deviceauth_alg_values: [...MDOC_DEVICE_AUTH_ALGS],
      },
    },
    ...(encryptionKey
      ? { jwks: { keys: [encryptionKey] }, encrypted_response_enc_values_supported: [...RESPONSE_ENC_VALUES] }
      : {}),
  };
}

export interface RequestObjectInput {
  clientId: string;
  responseUri: string;
  responseMode: 'direct_post' | 'direct_post.jwt';
  /** direct_post.jwt: the request's public encryption key (with kid, use enc, alg ECDH-ES) */
  encryptionKey?: JWK;
  /** OpenID4VP 1.0 §5.10: the wallet's nonce, echoed when it POSTed to the request URI */
  walletNonce?: string;
  nonce: string;
  state: string;
  dcqlQuery: DcqlQuery;
  /** OpenID4VP 1.0 §5.1: attestations about the verifier (the relying party's registration certificate) */
  verifierInfo?: VerifierInfo[];
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
    response_mode: input.responseMode,
    client_id: input.clientId,
    response_uri: input.responseUri,
    nonce: input.nonce,
    state: input.state,
    dcql_query: input.dcqlQuery,
    client_metadata: clientMetadata(input.encryptionKey),
    ...(input.verifierInfo ? { verifier_info: input.verifierInfo } : {}),
    ...(input.walletNonce !== undefined ? { wallet_nonce: input.walletNonce } : {}),
    iat: input.issuedAt,
    exp: input.expiresAt,
  };
}

/**
 * The Request Object as the verifier's Client Identifier Prefix requires it: signed (JAR, RFC 9101) with the
 * leaf's key, ES256, its chain in `x5c` (OpenID4VP 1.0 §5.9.3, HAIP 1.0), for the x509 prefixes; unsigned for
 * `redirect_uri`, which cannot sign.
 */
export async function requestObject(identity: ClientIdentity, payload: Record<string, unknown>): Promise<string> {
  if (!identity.signer) return unsignedRequestObject(payload);
  return new SignJWT(payload)
    .setProtectedHeader({ alg: 'ES256', typ: REQUEST_OBJECT_TYPE, x5c: identity.signer.x5c })
    .sign(identity.signer.key);
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
 * What the QR code and the same-device link carry: the Client Identifier, the Request URI and its method,
 * nothing else (OpenID4VP 1.0 §3.2, §5 and §5.10, RFC 9101 §5.2), on the `openid4vp://` scheme (§13.1.2).
 */
export function walletUriFor(clientId: string, requestUri: string): string {
  // §5.10: a wallet that cannot POST to the request URI falls back to GET (RFC 9101), which is served too
  return `openid4vp://?client_id=${encodeURIComponent(clientId)}&request_uri=${encodeURIComponent(requestUri)}&request_uri_method=post`;
}
