import { createPrivateKey, sign } from 'node:crypto';
import { getOpenid4vpClientId, validateOpenid4vpAuthorizationRequestPayload, zClientMetadata } from '@openid4vc/openid4vp';
import { digest } from '@sd-jwt/crypto-nodejs';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import type { JWK } from 'jose';
import { decodeJws } from './jws.js';
import { WalletError } from './errors.js';
import { signEs256 } from '../keys/es256.js';
import type { StoredCredential } from './walletFile.js';

/** The parts of a DCQL Credential Query (OpenID4VP 1.0 §6.1) the dev wallet acts on. */
export interface CredentialQuery {
  id: string;
  format: string;
  multiple?: boolean;
  meta?: { vct_values?: string[] };
  claims?: Array<{ id?: string; path: Array<string | number | null>; values?: unknown[] }>;
  claim_sets?: string[][];
}

/** A resolved Authorization Request (OpenID4VP 1.0 §5) the dev wallet can answer. */
export interface PresentationRequest {
  clientId: string;
  responseUri: string;
  nonce: string;
  state?: string;
  credentials: CredentialQuery[];
}

/** Picks the credential to present for one Credential Query; `candidates` are those whose vct it asks for. */
export type CredentialSelector = (query: CredentialQuery, candidates: StoredCredential[], all: StoredCredential[]) => StoredCredential | undefined;

export const REQUEST_OBJECT_TYPE = 'oauth-authz-req+jwt';

/** Reads an OpenID4VP link or QR payload (`openid4vp://?client_id=...&request_uri=...`). */
export function parseRequestReference(link: string): { clientId: string; requestUri: string } {
  let url: URL;
  try {
    url = new URL(link.trim());
  } catch {
    throw new WalletError('not an OpenID4VP request: expected a URL such as openid4vp://?client_id=...&request_uri=...');
  }
  const clientId = url.searchParams.get('client_id');
  const requestUri = url.searchParams.get('request_uri');
  if (url.searchParams.has('request')) throw new WalletError('the dev wallet takes requests by reference (request_uri), not by value');
  if (!requestUri) throw new WalletError('not an OpenID4VP request by reference: it has no request_uri');
  if (!clientId) throw new WalletError('the OpenID4VP request has no client_id');
  if (!isHttpUrl(requestUri)) throw new WalletError('request_uri must be an http(s) URL');
  const method = url.searchParams.get('request_uri_method');
  if (method !== null && method !== 'get') throw new WalletError(`request_uri_method ${method} is not supported by the dev wallet`);
  return { clientId, requestUri };
}

/**
 * Fetches and checks the Request Object (RFC 9101 §5.2, OpenID4VP 1.0 §5): `typ oauth-authz-req+jwt`, the
 * same `client_id` as the link, Client Identifier Prefix `redirect_uri` (the only one the dev wallet can
 * check: it holds no trust anchors), so the Request Object is unsigned and the identifier equals the
 * `response_uri`; `response_mode direct_post`, a nonce and a DCQL query.
 */
export async function resolveRequest(link: string, fetchImpl: typeof fetch): Promise<PresentationRequest> {
  const { clientId, requestUri } = parseRequestReference(link);
  const response = await reach(() => fetchImpl(requestUri, { headers: { accept: `application/${REQUEST_OBJECT_TYPE}` }, redirect: 'manual' }), requestUri);
  if (!response.ok) {
    const body = await response.text().catch(() => '');
    let detail = '';
    try {
      const json = JSON.parse(body) as { error?: unknown; error_description?: unknown };
      if (typeof json.error === 'string') detail = `: ${json.error}${typeof json.error_description === 'string' ? `: ${json.error_description}` : ''}`;
    } catch {
      // not JSON
    }
    throw new WalletError(`fetching the request object failed with HTTP ${response.status}${detail}`, { status: response.status });
  }
  const jwt = (await response.text()).trim();
  const { header, payload } = decodeJws(jwt, 'the request_uri did not return a request object (a JWT)');
  // OpenID4VP 1.0 §5: Wallets MUST NOT process Request Objects without this typ
  if (header.typ !== REQUEST_OBJECT_TYPE) throw new WalletError(`the request object typ is ${String(header.typ)}, expected ${REQUEST_OBJECT_TYPE}`);
  // RFC 9101 §6.2 / OpenID4VP 1.0 §5: the client_id of the link and of the Request Object are identical
  if (payload.client_id !== clientId) throw new WalletError('the client_id of the request object differs from the one in the link');

  let prefix: string;
  let identifier: string;
  try {
    ({ clientIdPrefix: prefix, clientIdIdentifier: identifier } = getOpenid4vpClientId({ clientId, responseMode: String(payload.response_mode) }) as { clientIdPrefix: string; clientIdIdentifier: string });
  } catch (err) {
    throw new WalletError(`unsupported client_id: ${(err as Error).message}`);
  }
  if (prefix !== 'redirect_uri') throw new WalletError(`client_id prefix ${prefix} is not supported by the dev wallet; it supports redirect_uri`);
  // OpenID4VP 1.0 §5.9.3: redirect_uri requests cannot be signed; with direct_post the identifier is the response_uri
  if (header.alg !== 'none') throw new WalletError('a request with the redirect_uri client_id prefix must not be signed');
  if (payload.response_type !== 'vp_token') throw new WalletError('response_type must be vp_token');
  if (payload.response_mode !== 'direct_post') throw new WalletError(`response_mode ${String(payload.response_mode)} is not supported by the dev wallet; it supports direct_post`);
  if (typeof payload.response_uri !== 'string' || payload.response_uri !== identifier) throw new WalletError('the response_uri differs from the redirect_uri client identifier');
  if (payload.redirect_uri !== undefined) throw new WalletError('a direct_post request must not carry redirect_uri');
  try {
    validateOpenid4vpAuthorizationRequestPayload({ params: payload as never });
    if (payload.client_metadata !== undefined) zClientMetadata.parse(payload.client_metadata);
  } catch (err) {
    throw new WalletError(`invalid authorization request: ${(err as Error).message}`);
  }
  if (typeof payload.nonce !== 'string' || !payload.nonce) throw new WalletError('the request has no nonce');
  if (payload.state !== undefined && typeof payload.state !== 'string') throw new WalletError('state must be a string');
  if (payload.transaction_data !== undefined) throw new WalletError('transaction_data is not supported by the dev wallet'); // §8.4: must refuse
  const dcql = payload.dcql_query as { credentials?: unknown } | undefined;
  if (!dcql || !Array.isArray(dcql.credentials) || dcql.credentials.length === 0) throw new WalletError('the request has no DCQL query');
  if ((dcql as { credential_sets?: unknown }).credential_sets !== undefined) throw new WalletError('credential_sets are not supported by the dev wallet');
  return {
    clientId,
    responseUri: payload.response_uri,
    nonce: payload.nonce,
    ...(typeof payload.state === 'string' ? { state: payload.state } : {}),
    credentials: dcql.credentials as CredentialQuery[],
  };
}

/** The first option of the query's claims (§6.4.1) the credential can satisfy, as claim names to disclose. */
export function claimsToDisclose(query: CredentialQuery, credential: StoredCredential): string[] | undefined {
  if (!query.claims) return [];
  const byId = new Map(query.claims.map((claim, i) => [claim.id ?? String(i), claim]));
  const options = query.claim_sets ?? [query.claims.map((claim, i) => claim.id ?? String(i))];
  for (const option of options) {
    const names: string[] = [];
    const ok = option.every((id) => {
      const claim = byId.get(id);
      if (!claim || claim.path.length !== 1 || typeof claim.path[0] !== 'string') return false; // nested paths: not supported
      const name = claim.path[0];
      if (!Object.hasOwn(credential.claims, name)) return false;
      if (claim.values && !claim.values.some((v) => v === credential.claims[name])) return false;
      names.push(name);
      return true;
    });
    if (ok) return names;
  }
  return undefined;
}

const firstCandidate: CredentialSelector = (_query, candidates) => candidates[0];

export interface Selection {
  query: CredentialQuery;
  credential: StoredCredential;
  disclose: string[];
}

/** For each Credential Query a stored credential whose vct it asks for and whose claims satisfy it. */
export function selectCredentials(request: PresentationRequest, credentials: StoredCredential[], select: CredentialSelector = firstCandidate): Selection[] | { missing: string } {
  const selections: Selection[] = [];
  for (const query of request.credentials) {
    if (query.format !== 'dc+sd-jwt') return { missing: `${query.id} (format ${query.format} is not supported by the dev wallet)` };
    const vcts = query.meta?.vct_values ?? [];
    const candidates = credentials.filter((c) => vcts.includes(c.vct) && claimsToDisclose(query, c) !== undefined);
    const credential = select(query, candidates, credentials);
    if (!credential) return { missing: `${query.id} (${vcts.join(', ') || 'any type'})` };
    selections.push({ query, credential, disclose: claimsToDisclose(query, credential) ?? [] });
  }
  return selections;
}

/**
 * An SD-JWT VC presentation (RFC 9901 §4): the credential with only the chosen disclosures, and a key
 * binding JWT signed with the credential's holder key: `aud` = the verifier's client_id, its `nonce`,
 * `iat` now, `sd_hash` over the presented SD-JWT (the library computes it).
 */
export async function createPresentation(credential: StoredCredential, disclose: string[], kb: { clientId: string; nonce: string; iat?: number }): Promise<string> {
  const { signer, alg } = holderSigner(credential.holderKey);
  const sdJwt = new SDJwtVcInstance({ hasher: digest, kbSigner: signer, kbSignAlg: alg });
  const frame = Object.fromEntries(disclose.map((name) => [name, true]));
  return sdJwt.present(credential.credential, frame, {
    kb: { payload: { aud: kb.clientId, nonce: kb.nonce, iat: kb.iat ?? Math.floor(Date.now() / 1000) } },
  });
}

/** OpenID4VP 1.0 §8.2: the response as a form POST to the response_uri; no redirects followed (§14.8). */
export async function submitResponse(
  request: PresentationRequest,
  params: Record<string, string>,
  fetchImpl: typeof fetch,
): Promise<{ status: number; body: unknown }> {
  const form = new URLSearchParams(params);
  if (request.state !== undefined) form.set('state', request.state);
  const response = await reach(
    () => fetchImpl(request.responseUri, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form,
      redirect: 'manual',
    }),
    request.responseUri,
  );
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, body };
}

/** A signer for the holder's private JWK: ES256 (P-256) or EdDSA (Ed25519), as a JWS signature (base64url). */
export function holderSigner(jwk: JWK): { signer: (data: string) => string; alg: 'ES256' | 'EdDSA' } {
  if (!jwk.d) throw new WalletError('the holder key of this credential is not a private key');
  const key = createPrivateKey({ key: jwk as never, format: 'jwk' });
  if (jwk.kty === 'EC' && jwk.crv === 'P-256') {
    return { alg: 'ES256', signer: (data) => signEs256(key, data) };
  }
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') {
    return { alg: 'EdDSA', signer: (data) => sign(null, Buffer.from(data), key).toString('base64url') };
  }
  throw new WalletError(`holder keys of type ${jwk.kty}/${String(jwk.crv)} are not supported; use P-256 or Ed25519`);
}

/** A network failure names the URL and its cause ("fetch failed" alone helps nobody). */
async function reach(call: () => Promise<Response>, url: string): Promise<Response> {
  try {
    return await call();
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new WalletError(`could not reach ${url}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
  }
}

function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === 'https:' || protocol === 'http:';
  } catch {
    return false;
  }
}
