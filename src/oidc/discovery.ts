import { CLIENT_AUTH_METHODS } from '../rules/clientAuth.js';
import type { VersionProfile } from './versions.js';

export type DiscoveryKind = 'par' | 'root';

/**
 * The OpenID configuration document, with exactly the values of the spec's table for each version
 * ("OpenID configuration document"), plus `code_challenge_methods_supported` (RFC 8414) where PKCE is
 * accepted, so that standard clients know they may use it (docs/decisions.md), and the additions for
 * libraries at their defaults (client_secret_basic, RFC 9207, UserInfo; `subject_types_supported` in the
 * Version 1 PAR document when the operator asks for it). The Version 1 root document has no PAR endpoint
 * and answers for the non-PAR authorise endpoint.
 */
export function discoveryDocument(
  profile: VersionProfile,
  baseUrl: string,
  kind: DiscoveryKind = 'par',
): Record<string, unknown> {
  const url = (path: string) => `${baseUrl}${path}`;
  const root = kind === 'root';
  const doc: Record<string, unknown> = { issuer: profile.issuer };
  if (!root) doc.pushed_authorization_request_endpoint = url(profile.paths.par);
  doc.authorization_endpoint = url(root ? profile.paths.authorizeNonPar! : profile.paths.authorize);
  doc.token_endpoint = url(profile.paths.token);
  // OIDC Core §5.3, an addition beyond the interface: libraries (Auth.js) refuse a document without one
  doc.userinfo_endpoint = url(profile.paths.userinfo);
  // what a client that registered signed answers (userinfoSignedResponseAlg) checks them against (§5.3.2)
  doc.userinfo_signing_alg_values_supported = ['RS256'];
  doc.jwks_uri = url(root ? profile.paths.rootJwks! : profile.paths.jwks);
  doc.response_modes_supported = ['query'];
  doc.id_token_signing_alg_values_supported = ['RS256'];
  doc.response_types_supported = ['code'];
  if (!root) doc.require_pushed_authorization_requests = profile.parDocument.require_pushed_authorization_requests;
  doc.grant_types_supported = ['authorization_code'];
  doc.token_endpoint_auth_methods_supported = [...CLIENT_AUTH_METHODS];
  // RFC 9207 §2.3: every redirect of every version's flows carries `iss` (oidc-provider's, the edge's
  // redirected errors, the context_id continuations), and a server that sends it says so
  doc.authorization_response_iss_parameter_supported = true;
  if (root || profile.parDocument.subjectTypes) doc.subject_types_supported = ['public'];
  if (root || profile.parDocument.full) {
    doc.request_parameter_supported = false;
    doc.code_challenge_methods_supported = ['S256', 'plain'];
  }
  return doc;
}
