import type Provider from 'oidc-provider';
import { randomBytes } from 'node:crypto';
import { UnsecuredJWT } from 'jose';
import { INTERNAL_PARAMS, type HintRecord } from './requestChecks.js';
import type { Store } from '../store/types.js';
import { oidcRecordKey } from '../store/oidcAdapter.js';

const PUSHED_REQUEST_URN = 'urn:ietf:params:oauth:request_uri:';

/** Where the provider of `namespace` keeps the pushed request a `request_uri` names; undefined for any other URI. */
export function pushedRequestKey(namespace: string, requestUri: string): string | undefined {
  if (!requestUri.startsWith(PUSHED_REQUEST_URN)) return undefined;
  return oidcRecordKey(namespace, 'PushedAuthorizationRequest', requestUri.slice(PUSHED_REQUEST_URN.length));
}

/**
 * The authorization parameters the edge checks in full at PAR (spec: PAR form fields; client_secret is
 * authentication, not part of the request), plus the edge's own references (INTERNAL_PARAMS).
 */
const EDGE_CHECKED = new Set([
  'client_id',
  'response_type',
  'redirect_uri',
  'scope',
  'state',
  'nonce',
  'response_mode',
  'code_challenge',
  'code_challenge_method',
  ...INTERNAL_PARAMS,
]);
const AUTHENTICATION = 'client_secret';

/** Headers that ask for something only oidc-provider's PAR endpoint handles (CORS, DPoP, other client auth). */
const PROVIDER_HEADERS = ['origin', 'dpop', 'authorization'] as const;

/**
 * Whether the edge has checked everything in this PAR request, so that storing it is all that is left.
 * A request with any other parameter or header (prompt, claims, a DPoP proof, a CORS origin, ...) goes
 * through oidc-provider's own PAR endpoint, which handles or refuses those.
 */
export function edgeCanStore(params: Record<string, string>, headers: Record<string, unknown>): boolean {
  for (const name of PROVIDER_HEADERS) if (headers[name] !== undefined) return false;
  for (const name of Object.keys(params)) if (!EDGE_CHECKED.has(name) && name !== AUTHENTICATION) return false;
  return true;
}

/** What a pushed request may carry beside the request: a verified hint's data, for as long as its flow may take. */
export interface CarriedHint {
  data: HintRecord;
  keepFor: number;
}

/**
 * Stores a PAR request the edge has already checked as oidc-provider's own PushedAuthorizationRequest
 * record, in the form its PAR endpoint stores (an unsecured request object from the client to the issuer,
 * `trusted` as for any authenticated client), so that the provider's authorise endpoint loads and checks
 * it as usual (RFC 9126 §2.2).
 *
 * An issuance request's hint data rides in the same record (`hint`, a field the provider's model does
 * not load), which then lives as long as the flow (`keepFor`) while the provider honours it only until
 * its `exp`; the request's `vc_hint` names the record itself. One write for the request and its data.
 *
 * The one place that writes an oidc-provider model in the provider's own format, which its documentation
 * does not describe. Going through the provider's PAR endpoint instead authenticates the client and checks
 * every parameter a second time, and halves PAR throughput against bare oidc-provider (bench/README.md),
 * far below the 0.90 target. test/integration/par.test.ts compares what this writes with what the
 * provider's endpoint writes, so an upgrade that changes the format fails that test.
 */
export async function storePushedRequest(
  store: Store,
  provider: Provider,
  namespace: string,
  clientId: string,
  params: Record<string, string>,
  lifetime: number,
  hint?: CarriedHint,
): Promise<{ request_uri: string; expires_in: number }> {
  // as the provider's own ids: 126 random bits or more (nanoid's 21 characters)
  const id = randomBytes(16).toString('base64url');
  const key = oidcRecordKey(namespace, 'PushedAuthorizationRequest', id);
  const payload: Record<string, string> = {};
  for (const [name, value] of Object.entries(params)) if (EDGE_CHECKED.has(name) && value) payload[name] = value;
  if (hint) payload.vc_hint = key;
  // a pushed External Client flow keeps its own request_uri, for its continuation to compare (D13)
  if (payload.vc_site === 'par') payload.vc_request_uri = `${PUSHED_REQUEST_URN}${id}`;
  const now = Math.floor(Date.now() / 1000);
  const request = new UnsecuredJWT(payload)
    .setIssuedAt(now)
    .setIssuer(clientId)
    .setAudience(provider.issuer)
    .setNotBefore(now)
    .setExpirationTime(now + lifetime)
    .encode();
  const record = {
    iat: now,
    exp: now + lifetime,
    jti: id,
    kind: 'PushedAuthorizationRequest',
    request,
    trusted: true,
    ...(hint ? { hint: hint.data } : {}),
  };
  await store.set(key, record, Math.max(lifetime, hint?.keepFor ?? 0));
  return { request_uri: `${PUSHED_REQUEST_URN}${id}`, expires_in: lifetime };
}
