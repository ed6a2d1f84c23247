import type Provider from 'oidc-provider';
import { invalidRequest } from '../rules/errors.js';
import { GrantClaims, HOLDER_ACCOUNT, type FlowClaims } from '../flow/flowClaims.js';
import type { ExternalRequest } from './flows.js';

/** What continuing takes besides the repeated parameters: `context_id` itself. */
const OWN = new Set(['context_id']);
/** The request's parameters kept with an External Client flow: a continuation may repeat them (they must equal the original's), the code is minted from them. */
export const CONTINUATION_PARAMS = [
  'client_id',
  'request_uri',
  'response_type',
  'redirect_uri',
  'scope',
  'state',
  'nonce',
  'response_mode',
  'code_challenge',
  'code_challenge_method',
];
const REPEATABLE = new Set(CONTINUATION_PARAMS);

/**
 * D13: the parameters of the authorise request that continues an External Client flow. `request_uri` is
 * required for a flow that was pushed (and refused for one that was not, as any parameter the original
 * request did not have); any other parameter repeated must equal the original's.
 */
export function checkContinuationParams(
  params: Record<string, string>,
  request: Pick<ExternalRequest, 'pushed' | 'params'>,
): void {
  const original = request.params;
  if (request.pushed && params.request_uri === undefined) {
    throw invalidRequest(
      'request_uri is required: this flow started with a pushed request, continue it with the same request_uri',
    );
  }
  for (const [name, value] of Object.entries(params)) {
    if (OWN.has(name)) continue;
    // a request oidc-provider's PAR endpoint stored (parameters beyond the spec's) did not keep its URI
    if (name === 'request_uri' && request.pushed && original.request_uri === undefined) continue;
    if (!REPEATABLE.has(name) || original[name] === undefined)
      throw invalidRequest(
        `${name}: not part of the original request; send client_id and context_id${request.pushed ? ' and request_uri' : ''}`,
      );
    if (original[name] !== value) throw invalidRequest(`${name} does not match the original request`);
  }
}

/** What a code is minted for: the original request's client and parameters, and the ID token's claims. */
export interface Continued {
  request: Pick<ExternalRequest, 'clientId' | 'params'>;
  claims: FlowClaims;
}

/**
 * Ends a flow continued in another user agent (an External Client flow's client, D13; a browser that
 * continued a VerifiedIdentity_Other journey, D12) as the holder's browser ends any other: a Grant for the
 * requested scope with the flow's claims under it (read by `findAccount` at the token endpoint), and an
 * authorization code for the original redirect_uri, nonce and PKCE challenge, minted with oidc-provider's
 * own AuthorizationCode model. Returns the redirect to the client (code, the original state, iss).
 */
export async function mintContinuationCode(
  provider: Provider,
  grantClaims: GrantClaims,
  continuation: Continued,
  claimsTtl: number,
): Promise<string> {
  const p = continuation.request.params;
  const client = await provider.Client.find(continuation.request.clientId);
  if (!client) throw invalidRequest('client_id is not a registered client');
  const grant = new provider.Grant({ accountId: HOLDER_ACCOUNT, clientId: client.clientId });
  grant.addOIDCScope(p.scope);
  const grantId = await grant.save();
  await grantClaims.save(grantId, continuation.claims, claimsTtl);
  const code = new provider.AuthorizationCode({
    accountId: HOLDER_ACCOUNT,
    authTime: Math.floor(Date.now() / 1000),
    client,
    grantId,
    scope: p.scope,
    redirectUri: p.redirect_uri,
    ...(p.nonce !== undefined ? { nonce: p.nonce } : {}),
    ...(p.code_challenge !== undefined
      ? { codeChallenge: p.code_challenge, codeChallengeMethod: p.code_challenge_method ?? 'plain' }
      : {}),
  } as never);
  const value = await code.save();
  const location = new URL(p.redirect_uri);
  location.searchParams.set('code', value);
  if (p.state !== undefined) location.searchParams.set('state', p.state);
  location.searchParams.set('iss', provider.issuer);
  return location.href;
}
