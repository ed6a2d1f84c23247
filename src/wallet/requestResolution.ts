import { randomBytes } from 'node:crypto';
import { validateOpenid4vpAuthorizationRequestPayload, zClientMetadata } from '@openid4vc/openid4vp';
import type { JWK } from 'jose';
import { decodeJws } from './jws.js';
import { WalletError } from './errors.js';
import { isHttpUrl, reach } from './http.js';
import type { CredentialQuery, PresentationRequest } from './presentation.js';
import { checkClient } from './requestClient.js';

/** What the dev wallet tells a verifier about itself when it POSTs to the request URI (OpenID4VP 1.0 §5.10). */
export const WALLET_METADATA = {
  vp_formats_supported: {
    'dc+sd-jwt': { 'sd-jwt_alg_values': ['ES256', 'EdDSA'], 'kb-jwt_alg_values': ['ES256', 'EdDSA'] },
    // §B.2.2: COSE algorithm numbers; -7 is ES256
    mso_mdoc: { issuerauth_alg_values: [-7], deviceauth_alg_values: [-7] },
  },
  client_id_prefixes_supported: ['x509_hash', 'x509_san_dns', 'redirect_uri'],
  request_object_signing_alg_values_supported: ['ES256'],
  authorization_encryption_alg_values_supported: ['ECDH-ES'],
  authorization_encryption_enc_values_supported: ['A128GCM', 'A256GCM'],
};
const ENC_VALUES = WALLET_METADATA.authorization_encryption_enc_values_supported;

/** §5.10: request_object_signing_alg_values_supported MUST NOT be sent when the prefix precludes signed requests (redirect_uri). */
export function walletMetadataFor(clientId: string): Partial<typeof WALLET_METADATA> {
  if (!clientId.startsWith('redirect_uri:')) return WALLET_METADATA;
  const { request_object_signing_alg_values_supported: _unsigned, ...metadata } = WALLET_METADATA;
  return metadata;
}

export const REQUEST_OBJECT_TYPE = 'oauth-authz-req+jwt';

/** Reads an OpenID4VP link or QR payload (`openid4vp://?client_id=...&request_uri=...[&request_uri_method=post]`). */
export function parseRequestReference(link: string): { clientId: string; requestUri: string; method: 'get' | 'post' } {
  let url: URL;
  try {
    url = new URL(link.trim());
  } catch {
    throw new WalletError(
      'not an OpenID4VP request: expected a URL such as openid4vp://?client_id=...&request_uri=...',
    );
  }
  const clientId = url.searchParams.get('client_id');
  const requestUri = url.searchParams.get('request_uri');
  if (url.searchParams.has('request'))
    throw new WalletError('the dev wallet takes requests by reference (request_uri), not by value');
  if (!requestUri) throw new WalletError('not an OpenID4VP request by reference: it has no request_uri');
  if (!clientId) throw new WalletError('the OpenID4VP request has no client_id');
  if (!isHttpUrl(requestUri)) throw new WalletError('request_uri must be an http(s) URL');
  const method = url.searchParams.get('request_uri_method') ?? 'get';
  // §5.1: case-sensitive get or post; anything else is invalid_request_uri_method
  if (method !== 'get' && method !== 'post')
    throw new WalletError(`invalid_request_uri_method: request_uri_method ${method} is neither get nor post`);
  return { clientId, requestUri, method };
}

/** §8.3: the key to encrypt the answer to (EC P-256, ECDH-ES, for encryption) and an enc both sides support. */
function encryptionFor(clientMetadata: unknown): { jwk: JWK; enc: string } {
  const metadata = (clientMetadata ?? {}) as {
    jwks?: { keys?: unknown };
    encrypted_response_enc_values_supported?: unknown;
  };
  const keys = Array.isArray(metadata.jwks?.keys) ? (metadata.jwks.keys as JWK[]) : [];
  const jwk = keys.find(
    (k) => k.kty === 'EC' && k.crv === 'P-256' && k.alg === 'ECDH-ES' && (k.use === undefined || k.use === 'enc'),
  );
  if (!jwk)
    throw new WalletError('a direct_post.jwt request must carry client_metadata.jwks with an ECDH-ES P-256 key');
  const offered = Array.isArray(metadata.encrypted_response_enc_values_supported)
    ? metadata.encrypted_response_enc_values_supported
    : ['A128GCM'];
  const enc = ENC_VALUES.find((e) => offered.includes(e));
  if (!enc)
    throw new WalletError(
      `the verifier accepts no content encryption the dev wallet supports (${ENC_VALUES.join(', ')})`,
    );
  return { jwk, enc };
}

/**
 * Fetches and checks the Request Object (RFC 9101 §5.2, OpenID4VP 1.0 §5): by GET, or by POST with the
 * wallet's metadata and a nonce the signed object must echo (§5.10); `typ oauth-authz-req+jwt`, the same
 * `client_id` as the link; signed under an X.509 prefix whose chain ends at a CA in `trust` (§5.9.3), or
 * unsigned under `redirect_uri` with the identifier equal to the `response_uri`; `response_mode`
 * `direct_post` or `direct_post.jwt` (with a key to encrypt to), a nonce and a DCQL query.
 */
export async function resolveRequest(
  link: string,
  fetchImpl: typeof fetch,
  opts: { trust?: Uint8Array[] } = {},
): Promise<PresentationRequest> {
  const { clientId, requestUri, method } = parseRequestReference(link);
  const walletNonce = method === 'post' ? randomBytes(16).toString('base64url') : undefined;
  const jwt = await fetchRequestObject(requestUri, clientId, walletNonce, fetchImpl);
  const { header, payload } = decodeJws(jwt, 'the request_uri did not return a request object (a JWT)');
  // OpenID4VP 1.0 §5: Wallets MUST NOT process Request Objects without this typ
  if (header.typ !== REQUEST_OBJECT_TYPE)
    throw new WalletError(`the request object typ is ${String(header.typ)}, expected ${REQUEST_OBJECT_TYPE}`);
  // RFC 9101 §6.2 / OpenID4VP 1.0 §5: the client_id of the link and of the Request Object are identical
  if (payload.client_id !== clientId)
    throw new WalletError('the client_id of the request object differs from the one in the link');
  const verifierSubject = await checkClient(jwt, header, payload, clientId, opts.trust);
  const { responseUri, nonce, state } = checkRequestFields(payload, walletNonce);
  const { credentials, credentialSets } = readDcqlQuery(payload.dcql_query);
  return {
    clientId,
    responseUri,
    nonce,
    ...(state !== undefined ? { state } : {}),
    credentials,
    ...(credentialSets ? { credentialSets } : {}),
    ...(payload.response_mode === 'direct_post.jwt' ? { encryption: encryptionFor(payload.client_metadata) } : {}),
    ...(verifierSubject !== undefined ? { verifierSubject } : {}),
  };
}

/**
 * The Request Object as text: by GET, or (with a wallet nonce) by POST with the wallet's metadata (§5.10);
 * no redirects followed. A refusal names the verifier's OAuth error when it sent one.
 */
async function fetchRequestObject(
  requestUri: string,
  clientId: string,
  walletNonce: string | undefined,
  fetchImpl: typeof fetch,
): Promise<string> {
  const accept = `application/${REQUEST_OBJECT_TYPE}`;
  const response = await reach(
    () =>
      walletNonce !== undefined
        ? fetchImpl(requestUri, {
            method: 'POST',
            headers: { accept, 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({
              wallet_metadata: JSON.stringify(walletMetadataFor(clientId)),
              wallet_nonce: walletNonce,
            }),
            redirect: 'manual',
          })
        : fetchImpl(requestUri, { headers: { accept }, redirect: 'manual' }),
    requestUri,
  );
  if (!response.ok) {
    const body = await response.text().catch(() => '');
    throw new WalletError(`fetching the request object failed with HTTP ${response.status}${oauthError(body)}`, {
      status: response.status,
    });
  }
  return (await response.text()).trim();
}

/** `: error: description` from an OAuth error body, or nothing when the body is not one. */
function oauthError(body: string): string {
  try {
    const json = JSON.parse(body) as { error?: unknown; error_description?: unknown };
    if (typeof json.error === 'string')
      return `: ${json.error}${typeof json.error_description === 'string' ? `: ${json.error_description}` : ''}`;
  } catch {
    // not JSON
  }
  return '';
}

/**
 * The Authorization Request parameters besides the client and the query: the echoed wallet nonce (§5.10.1),
 * expiry, `response_type vp_token`, a `direct_post(.jwt)` response mode with an http(s) `response_uri`,
 * what the OpenID4VP library checks, a nonce, a string state, and no transaction data (§8.4).
 */
function checkRequestFields(
  payload: Record<string, unknown>,
  walletNonce: string | undefined,
): { responseUri: string; nonce: string; state?: string } {
  // §5.10.1: the nonce the wallet sent must come back in the signed object
  if (walletNonce !== undefined && payload.wallet_nonce !== walletNonce)
    throw new WalletError('the request object does not echo the wallet_nonce the wallet sent');
  // RFC 7519 §4.1.4: an expired request object is not processed (a minute of clock skew allowed)
  if (typeof payload.exp === 'number' && payload.exp < Date.now() / 1000 - 60)
    throw new WalletError('the request object has expired');
  if (payload.response_type !== 'vp_token') throw new WalletError('response_type must be vp_token');
  if (payload.response_mode !== 'direct_post' && payload.response_mode !== 'direct_post.jwt') {
    throw new WalletError(
      `response_mode ${String(payload.response_mode)} is not supported by the dev wallet; it supports direct_post and direct_post.jwt`,
    );
  }
  if (typeof payload.response_uri !== 'string' || !isHttpUrl(payload.response_uri))
    throw new WalletError('the request has no http(s) response_uri');
  if (payload.redirect_uri !== undefined) throw new WalletError('a direct_post request must not carry redirect_uri');
  try {
    validateOpenid4vpAuthorizationRequestPayload({
      params: payload as never,
      ...(walletNonce !== undefined ? { walletVerificationOptions: { expectedNonce: walletNonce } } : {}),
    });
    if (payload.client_metadata !== undefined) zClientMetadata.parse(payload.client_metadata);
  } catch (err) {
    throw new WalletError(`invalid authorization request: ${(err as Error).message}`);
  }
  if (typeof payload.nonce !== 'string' || !payload.nonce) throw new WalletError('the request has no nonce');
  if (payload.state !== undefined && typeof payload.state !== 'string') throw new WalletError('state must be a string');
  if (payload.transaction_data !== undefined)
    throw new WalletError('transaction_data is not supported by the dev wallet'); // §8.4: must refuse
  return {
    responseUri: payload.response_uri,
    nonce: payload.nonce,
    ...(typeof payload.state === 'string' ? { state: payload.state } : {}),
  };
}

/** The DCQL query (§6): at least one Credential Query, and `credential_sets` as sets with options when present. */
function readDcqlQuery(query: unknown): Pick<PresentationRequest, 'credentials' | 'credentialSets'> {
  const dcql = query as { credentials?: unknown } | undefined;
  if (!dcql || !Array.isArray(dcql.credentials) || dcql.credentials.length === 0)
    throw new WalletError('the request has no DCQL query');
  const sets = (dcql as { credential_sets?: unknown }).credential_sets;
  if (
    sets !== undefined &&
    (!Array.isArray(sets) || !sets.every((set) => Array.isArray((set as { options?: unknown }).options)))
  )
    throw new WalletError('credential_sets must be an array of sets with options');
  return {
    credentials: dcql.credentials as CredentialQuery[],
    ...(sets ? { credentialSets: sets as PresentationRequest['credentialSets'] } : {}),
  };
}
