import { ProtocolError, type ErrorCode } from '../rules/errors.js';

/** Where oidc-provider answered: each site maps its codes onto the spec's tables (D4). */
export type ErrorSite = 'par' | 'authorize' | 'token';

/** oidc-provider's `invalid_grant` details, turned into descriptions that name the parameter. */
const GRANT_DETAILS: Record<string, string> = {
  'authorization code not found': 'code is invalid, expired or already used',
  'authorization code is expired': 'code has expired',
  'authorization code already consumed': 'code has already been used; the tokens it issued are revoked',
  'authorization code redirect_uri mismatch': 'redirect_uri does not match the authorization request',
  'PKCE verification failed': 'code_verifier does not match the code_challenge',
  'unsupported code_challenge_method': 'code_verifier was sent, but the authorization request had no code_challenge',
  'grant not found': 'code is invalid, expired or already used',
  'grant is expired': 'code has expired',
  'authorization code invalid (referenced account not found)': 'code is invalid, expired or already used',
};

/**
 * Maps an error oidc-provider produced onto the spec's code for that site.
 * - PAR and token: failed client authentication is `unauthorised_client` (400), not RFC 6749's
 *   `invalid_client` (401), unless the deployment asked for RFC 6749 codes; at the token endpoint a
 *   code issued to another client is `invalid_client` (spec: Token errors, ClientId row).
 * - authorise: an unknown client, a bad request_uri or redirect_uri are `invalid_request`.
 */
export function mapProviderError(
  site: ErrorSite,
  error: string,
  description: string | undefined,
  detail: string | undefined,
  rfc6749: boolean,
): { error: ErrorCode | string; description: string; status?: number } {
  const d = description ?? '';
  if (site === 'token' && error === 'invalid_grant') {
    if (detail === 'client mismatch' && !rfc6749)
      return {
        error: 'invalid_client',
        description: 'client_id does not match the client the code was issued to',
        status: 400,
      };
    if (detail === 'client mismatch') return { error, description: 'code was issued to another client_id' };
    if (detail && GRANT_DETAILS[detail]) return { error, description: GRANT_DETAILS[detail] };
    if (detail?.startsWith('PKCE') || detail?.includes('code_verifier'))
      return { error, description: `code_verifier: ${detail}` };
    return { error, description: d === 'grant request is invalid' ? 'code is invalid, expired or already used' : d };
  }
  if ((site === 'par' || site === 'token') && error === 'invalid_client' && !rfc6749) {
    return {
      error: 'unauthorised_client',
      description: 'client authentication failed: client_id or client_secret is wrong',
      status: 400,
    };
  }
  if (site === 'authorize' && error === 'invalid_client') {
    return { error: 'invalid_request', description: 'client_id is not a registered client' };
  }
  if (site === 'authorize' || site === 'par') {
    if (error === 'invalid_request_uri') return { error: 'invalid_request', description: `request_uri: ${d}` };
    if (error === 'invalid_redirect_uri')
      return { error: 'invalid_request', description: 'redirect_uri is not registered for this client' };
    if (error === 'invalid_request_object') return { error: 'invalid_request', description: d };
    if (error === 'request_uri_not_supported') {
      return {
        error: 'invalid_request',
        description:
          site === 'par'
            ? 'request_uri is not allowed in a PAR request'
            : 'request_uri must be the urn:ietf:params:oauth:request_uri: value returned by PAR',
      };
    }
    if (error === 'request_not_supported')
      return {
        error: 'invalid_request',
        description: 'request (a request object) is not supported; send the parameters themselves',
      };
    if (error === 'registration_not_supported')
      return {
        error: 'invalid_request',
        description: 'registration is not supported; clients are registered in the configuration',
      };
  }
  return { error, description: d || `${error.replaceAll('_', ' ')}` };
}

export function toProtocolError(
  mapped: { error: string; description: string; status?: number },
  status: number,
): ProtocolError {
  return new ProtocolError(mapped.error as ErrorCode, mapped.description, mapped.status ?? status);
}
