import { createPrivateKey, randomBytes, sign } from 'node:crypto';
import {
  getOpenid4vpClientId,
  validateOpenid4vpAuthorizationRequestPayload,
  zClientMetadata,
} from '@openid4vc/openid4vp';
import { digest } from '@sd-jwt/crypto-nodejs';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { base64url, calculateJwkThumbprint, CompactEncrypt, compactVerify, importJWK, type JWK } from 'jose';
import {
  altNames,
  certificatePublicKey,
  CertificateError,
  checkChain,
  readX5c,
  subjectName,
  x509Hash,
} from './certificates.js';
import { decodeJws } from './jws.js';
import { WalletError } from './errors.js';
import type { StoredCredential, StoredMdoc, StoredSdJwt } from './walletFile.js';

/** The parts of a DCQL Credential Query (OpenID4VP 1.0 §6.1) the dev wallet acts on. */
export interface CredentialQuery {
  id: string;
  format: string;
  multiple?: boolean;
  /** `vct_values` for dc+sd-jwt (§B.3.5), `doctype_value` for mso_mdoc (§B.2.3) */
  meta?: { vct_values?: string[]; doctype_value?: string };
  /** §6.1.1: a hint to leave out credentials a verifier would not trust; the dev wallet does not filter by it */
  trusted_authorities?: Array<{ type: string; values: string[] }>;
  claims?: Array<{ id?: string; path: Array<string | number | null>; values?: unknown[]; intent_to_retain?: boolean }>;
  claim_sets?: string[][];
}

/** A resolved Authorization Request (OpenID4VP 1.0 §5) the dev wallet can answer. */
export interface PresentationRequest {
  clientId: string;
  responseUri: string;
  nonce: string;
  state?: string;
  credentials: CredentialQuery[];
  /** §6.2: alternatives; each required set is answered by one of its options */
  credentialSets?: Array<{ options: string[][]; required?: boolean }>;
  /** direct_post.jwt (§8.3): the key the answer is encrypted to, and the content encryption */
  encryption?: { jwk: JWK; enc: string };
  /** x509_hash / x509_san_dns (§5.9.3): the subject of the verifier's leaf certificate, to show the holder */
  verifierSubject?: string;
}

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

/**
 * Picks the credential to present for one Credential Query; `candidates` are those of the format and type
 * (vct or doctype) it asks for whose claims satisfy it.
 */
export type CredentialSelector = (
  query: CredentialQuery,
  candidates: StoredCredential[],
  all: StoredCredential[],
) => StoredCredential | undefined;

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

/**
 * OpenID4VP 1.0 §5.9.3 `x509_hash` and `x509_san_dns`: the Request Object is signed (ES256) with the key of
 * the leaf of its `x5c`; the chain ends at a CA the wallet trusts; the identifier is the leaf's hash, or a
 * dNSName of the leaf that is also the response URI's host.
 */
async function checkX509Request(
  jwt: string,
  header: Record<string, unknown>,
  prefix: string,
  identifier: string,
  responseUri: unknown,
  trust: Uint8Array[] | undefined,
): Promise<string> {
  if (header.alg !== 'ES256')
    throw new WalletError(`a ${prefix} request must be signed with ES256, not ${String(header.alg)}`);
  const x5c = header.x5c;
  if (!Array.isArray(x5c) || x5c.length === 0 || !x5c.every((c) => typeof c === 'string'))
    throw new WalletError(`a ${prefix} request must carry its certificate chain in x5c`);
  if (!trust?.length)
    throw new WalletError(
      'the request is signed under a verifier certificate: pass --trust <CA file> to say which CAs to trust (npm start prints which: keys/verifier-ca.pem)',
    );
  let chain: Uint8Array[];
  try {
    chain = readX5c(x5c, 'the request x5c');
  } catch {
    throw new WalletError('the request x5c does not hold readable certificates');
  }
  try {
    await checkChain(chain, { trust });
  } catch (err) {
    if (err instanceof CertificateError)
      throw new WalletError(`the verifier certificate is not trusted: ${err.message}`);
    throw err;
  }
  try {
    await compactVerify(jwt, certificatePublicKey(chain[0]), { algorithms: ['ES256'] });
  } catch {
    throw new WalletError('the request object signature does not verify with its x5c leaf certificate');
  }
  if (prefix === 'x509_hash' && identifier !== x509Hash(chain[0]))
    throw new WalletError('the x509_hash client_id is not the hash of the x5c leaf certificate');
  if (prefix === 'x509_san_dns') {
    if (!altNames(chain[0], 'dns').includes(identifier))
      throw new WalletError(`the x5c leaf certificate does not name ${identifier} (subjectAltName dNSName)`);
    let host: string | undefined;
    try {
      host = new URL(String(responseUri)).hostname;
    } catch {
      // checked below as a missing response_uri
    }
    if (host !== identifier)
      throw new WalletError(`the response_uri host is not ${identifier}, the x509_san_dns client identifier`);
  }
  return subjectName(chain[0]);
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
  const response = await reach(
    () =>
      method === 'post'
        ? fetchImpl(requestUri, {
            method: 'POST',
            headers: {
              accept: `application/${REQUEST_OBJECT_TYPE}`,
              'content-type': 'application/x-www-form-urlencoded',
            },
            body: new URLSearchParams({
              wallet_metadata: JSON.stringify(walletMetadataFor(clientId)),
              wallet_nonce: walletNonce!,
            }),
            redirect: 'manual',
          })
        : fetchImpl(requestUri, { headers: { accept: `application/${REQUEST_OBJECT_TYPE}` }, redirect: 'manual' }),
    requestUri,
  );
  if (!response.ok) {
    const body = await response.text().catch(() => '');
    let detail = '';
    try {
      const json = JSON.parse(body) as { error?: unknown; error_description?: unknown };
      if (typeof json.error === 'string')
        detail = `: ${json.error}${typeof json.error_description === 'string' ? `: ${json.error_description}` : ''}`;
    } catch {
      // not JSON
    }
    throw new WalletError(`fetching the request object failed with HTTP ${response.status}${detail}`, {
      status: response.status,
    });
  }
  const jwt = (await response.text()).trim();
  const { header, payload } = decodeJws(jwt, 'the request_uri did not return a request object (a JWT)');
  // OpenID4VP 1.0 §5: Wallets MUST NOT process Request Objects without this typ
  if (header.typ !== REQUEST_OBJECT_TYPE)
    throw new WalletError(`the request object typ is ${String(header.typ)}, expected ${REQUEST_OBJECT_TYPE}`);
  // RFC 9101 §6.2 / OpenID4VP 1.0 §5: the client_id of the link and of the Request Object are identical
  if (payload.client_id !== clientId)
    throw new WalletError('the client_id of the request object differs from the one in the link');

  let prefix: string;
  let identifier: string;
  let verifierSubject: string | undefined;
  try {
    ({ clientIdPrefix: prefix, clientIdIdentifier: identifier } = getOpenid4vpClientId({
      clientId,
      responseMode: String(payload.response_mode),
    }) as { clientIdPrefix: string; clientIdIdentifier: string });
  } catch (err) {
    throw new WalletError(`unsupported client_id: ${(err as Error).message}`);
  }
  if (prefix === 'x509_hash' || prefix === 'x509_san_dns') {
    verifierSubject = await checkX509Request(jwt, header, prefix, identifier, payload.response_uri, opts.trust);
  } else if (prefix === 'redirect_uri') {
    // OpenID4VP 1.0 §5.9.3: redirect_uri requests cannot be signed; with direct_post the identifier is the response_uri
    if (header.alg !== 'none')
      throw new WalletError('a request with the redirect_uri client_id prefix must not be signed');
    if (payload.response_uri !== identifier)
      throw new WalletError('the response_uri differs from the redirect_uri client identifier');
  } else {
    throw new WalletError(
      `client_id prefix ${prefix} is not supported by the dev wallet; it supports x509_hash, x509_san_dns and redirect_uri`,
    );
  }
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
  const dcql = payload.dcql_query as { credentials?: unknown } | undefined;
  if (!dcql || !Array.isArray(dcql.credentials) || dcql.credentials.length === 0)
    throw new WalletError('the request has no DCQL query');
  const sets = (dcql as { credential_sets?: unknown }).credential_sets;
  if (
    sets !== undefined &&
    (!Array.isArray(sets) || !sets.every((set) => Array.isArray((set as { options?: unknown }).options)))
  )
    throw new WalletError('credential_sets must be an array of sets with options');
  return {
    clientId,
    responseUri: payload.response_uri,
    nonce: payload.nonce,
    ...(typeof payload.state === 'string' ? { state: payload.state } : {}),
    credentials: dcql.credentials as CredentialQuery[],
    ...(sets ? { credentialSets: sets as PresentationRequest['credentialSets'] } : {}),
    ...(payload.response_mode === 'direct_post.jwt' ? { encryption: encryptionFor(payload.client_metadata) } : {}),
    ...(verifierSubject !== undefined ? { verifierSubject } : {}),
  };
}

type ClaimsQuery = NonNullable<CredentialQuery['claims']>[number];

/**
 * Where one Claims Query points in a stored credential (claims path pointer, §7): a top-level claim of an
 * SD-JWT VC, or `[namespace, element]` of an mdoc (§7.2). Nested paths are not supported. With `values`
 * (§6.3) the claim counts only when its value is one of them (mdoc values as read, compared as JSON, §6.3).
 */
function locate(claim: ClaimsQuery, credential: StoredCredential): { namespace?: string; name: string } | undefined {
  const matches = (value: unknown) =>
    !claim.values || claim.values.some((v) => v === value || JSON.stringify(v) === JSON.stringify(value));
  if (credential.format === 'mso_mdoc') {
    const [namespace, name] = claim.path;
    if (claim.path.length !== 2 || typeof namespace !== 'string' || typeof name !== 'string') return undefined;
    const elements = credential.claims[namespace];
    if (!elements || !Object.hasOwn(elements, name) || !matches(elements[name])) return undefined;
    return { namespace, name };
  }
  const [name] = claim.path;
  if (claim.path.length !== 1 || typeof name !== 'string') return undefined;
  if (!Object.hasOwn(credential.claims, name) || !matches(credential.claims[name])) return undefined;
  return { name };
}

/** The claims of the first option (§6.4.1: `claim_sets` in order, else all `claims`) the credential satisfies. */
function satisfiedClaims(
  query: CredentialQuery,
  credential: StoredCredential,
): Array<{ namespace?: string; name: string }> | undefined {
  if (!query.claims) return [];
  const byId = new Map(query.claims.map((claim, i) => [claim.id ?? String(i), claim]));
  const options = query.claim_sets ?? [query.claims.map((claim, i) => claim.id ?? String(i))];
  for (const option of options) {
    const located = option.map((id) => (byId.has(id) ? locate(byId.get(id)!, credential) : undefined));
    if (located.every((l) => l !== undefined)) return located as Array<{ namespace?: string; name: string }>;
  }
  return undefined;
}

/** The first option of the query's claims (§6.4.1) the credential can satisfy, as claim names to disclose. */
export function claimsToDisclose(query: CredentialQuery, credential: StoredCredential): string[] | undefined {
  return satisfiedClaims(query, credential)?.map((c) => c.name);
}

/**
 * The mdoc elements to disclose for a query: those of the first option the mdoc satisfies, all in one
 * namespace (what the dev wallet's DeviceResponse carries). Without `claims`, no element (§6.4.1: only what
 * is mandatory to present), in the mdoc's first namespace.
 */
export function mdocElementsToDisclose(
  query: CredentialQuery,
  credential: StoredMdoc,
): { namespace: string; elements: string[] } | undefined {
  const claims = satisfiedClaims(query, credential);
  if (!claims) return undefined;
  const namespaces = new Set(claims.map((c) => c.namespace!));
  if (namespaces.size > 1) return undefined;
  const namespace = [...namespaces][0] ?? Object.keys(credential.claims)[0] ?? credential.doctype;
  return { namespace, elements: claims.map((c) => c.name) };
}

const firstCandidate: CredentialSelector = (_query, candidates) => candidates[0];

/** One Credential Query and what answers it: an SD-JWT VC and the claims to disclose, or an mdoc and its elements. */
export type Selection =
  | { query: CredentialQuery; credential: StoredSdJwt; disclose: string[] }
  | { query: CredentialQuery; credential: StoredMdoc; disclose: string[]; namespace: string };

const SUPPORTED_FORMATS = ['dc+sd-jwt', 'mso_mdoc'];

/** §B.3.5 `vct_values` / §B.2.3 `doctype_value`: the types a query accepts, for messages and matching. */
function typesOf(query: CredentialQuery): string[] {
  if (query.format === 'mso_mdoc') return query.meta?.doctype_value !== undefined ? [query.meta.doctype_value] : [];
  return query.meta?.vct_values ?? [];
}

function isOfType(query: CredentialQuery, credential: StoredCredential): boolean {
  if (credential.format !== query.format) return false;
  return typesOf(query).includes(credential.format === 'mso_mdoc' ? credential.doctype : credential.vct);
}

/**
 * For each Credential Query to answer a stored credential of its format and type (vct or doctype) whose
 * claims satisfy it. With `credential_sets` (§6.2, §6.4.2), per set the first option whose every query
 * the wallet can answer (optional sets only when it can); without them, every query. A query chosen by
 * several sets is answered once.
 */
export function selectCredentials(
  request: PresentationRequest,
  credentials: StoredCredential[],
  select: CredentialSelector = firstCandidate,
): Selection[] | { missing: string } {
  const byId = new Map(request.credentials.map((q) => [q.id, q]));
  const picked = new Map<string, Selection | { missing: string }>();
  const pick = (id: string): Selection | { missing: string } => {
    if (picked.has(id)) return picked.get(id)!;
    const query = byId.get(id);
    let result: Selection | { missing: string };
    if (!query) result = { missing: `${id} (not a credential query of the request)` };
    else if (!SUPPORTED_FORMATS.includes(query.format))
      result = { missing: `${query.id} (format ${query.format} is not supported by the dev wallet)` };
    else {
      const candidates = credentials.filter((c) => isOfType(query, c) && satisfiedClaims(query, c) !== undefined);
      const credential = select(query, candidates, credentials);
      if (!credential) result = { missing: `${query.id} (${typesOf(query).join(', ') || 'any type'})` };
      else if (credential.format === 'mso_mdoc') {
        // a selector may pick any credential (tests present what a verifier must refuse): disclose what fits
        const { namespace, elements } = mdocElementsToDisclose(query, credential) ?? {
          namespace: Object.keys(credential.claims)[0] ?? credential.doctype,
          elements: [],
        };
        result = { query, credential, disclose: elements, namespace };
      } else result = { query, credential, disclose: claimsToDisclose(query, credential) ?? [] };
    }
    picked.set(id, result);
    return result;
  };
  const sets = request.credentialSets ?? [{ options: [request.credentials.map((q) => q.id)], required: true }];
  const chosen = new Map<string, Selection>();
  for (const set of sets) {
    const lacking: string[] = [];
    const option = set.options.find((ids) => {
      const missing = ids.map(pick).find((p): p is { missing: string } => 'missing' in p);
      if (missing) lacking.push(missing.missing);
      return !missing;
    });
    if (option) for (const id of option) chosen.set(id, pick(id) as Selection);
    else if (set.required !== false) return { missing: lacking.join(' or ') };
  }
  return [...chosen.values()];
}

/**
 * An SD-JWT VC presentation (RFC 9901 §4): the credential with only the chosen disclosures, and a key
 * binding JWT signed with the credential's holder key: `aud` = the verifier's client_id, its `nonce`,
 * `iat` now, `sd_hash` over the presented SD-JWT (the library computes it).
 */
export async function createPresentation(
  credential: StoredCredential,
  disclose: string[],
  kb: { clientId: string; nonce: string; iat?: number },
): Promise<string> {
  if (credential.format !== 'dc+sd-jwt')
    throw new WalletError(`createPresentation presents SD-JWT VCs, not ${credential.format}; use presentationFor`);
  const { signer, alg } = holderSigner(credential.holderKey);
  const sdJwt = new SDJwtVcInstance({ hasher: digest, kbSigner: signer, kbSignAlg: alg });
  const frame = Object.fromEntries(disclose.map((name) => [name, true]));
  return sdJwt.present(credential.credential, frame, {
    kb: { payload: { aud: kb.clientId, nonce: kb.nonce, iat: kb.iat ?? Math.floor(Date.now() / 1000) } },
  });
}

/**
 * The presentation for one selection: an SD-JWT VC with a key binding JWT, or an mdoc DeviceResponse
 * signed over the OpenID4VP handover (§B.2.6.1: client_id, nonce, the thumbprint of the key the response
 * is encrypted to or null, response_uri).
 */
export async function presentationFor(selection: Selection, request: PresentationRequest): Promise<string> {
  if (!('namespace' in selection))
    return createPresentation(selection.credential, selection.disclose, {
      clientId: request.clientId,
      nonce: request.nonce,
    });
  const { presentMdoc } = await import('./mdoc.js'); // the mdoc library loads only when an mdoc is presented
  const { credential } = selection;
  const jwkThumbprint = request.encryption
    ? base64url.decode(await calculateJwkThumbprint(request.encryption.jwk, 'sha256'))
    : undefined;
  return presentMdoc(
    { issuerSigned: credential.credential, doctype: credential.doctype, deviceKey: credential.holderKey },
    { namespace: selection.namespace, elements: selection.disclose },
    {
      clientId: request.clientId,
      nonce: request.nonce,
      responseUri: request.responseUri,
      ...(jwkThumbprint ? { jwkThumbprint } : {}),
    },
  );
}

/**
 * OpenID4VP 1.0 §8.2: the response as a form POST to the response_uri; no redirects followed (§14.8). For
 * direct_post.jwt (§8.3), the parameters (with `vp_token` as a JSON object) are a JWE to the verifier's key,
 * sent as `response`.
 */
export async function submitResponse(
  request: PresentationRequest,
  params: Record<string, string>,
  fetchImpl: typeof fetch,
): Promise<{ status: number; body: unknown }> {
  let form: URLSearchParams;
  if (request.encryption) {
    const { jwk, enc } = request.encryption;
    const payload: Record<string, unknown> = {
      ...params,
      ...(params.vp_token !== undefined ? { vp_token: JSON.parse(params.vp_token) as unknown } : {}),
    };
    if (request.state !== undefined) payload.state = request.state;
    const jwe = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify(payload)))
      .setProtectedHeader({ alg: 'ECDH-ES', enc, ...(jwk.kid !== undefined ? { kid: jwk.kid } : {}) })
      .encrypt(await importJWK(jwk, 'ECDH-ES'));
    form = new URLSearchParams({ response: jwe });
  } else {
    form = new URLSearchParams(params);
    if (request.state !== undefined) form.set('state', request.state);
  }
  const response = await reach(
    () =>
      fetchImpl(request.responseUri, {
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
    // RFC 7518 §3.4: an ES256 JWS signature is r || s, not DER
    return {
      alg: 'ES256',
      signer: (data) => sign('sha256', Buffer.from(data), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url'),
    };
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
