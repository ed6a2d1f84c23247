/**
 * A version of the interface is data (docs/architecture.md): its paths, its issuer, and which rules apply.
 * Every difference between Version 1 and Version 2 is a field here; no code asks which version it serves.
 * Paths are relative to the service's base URL.
 */
export interface VersionProfile {
  /** names the version's store namespace, cookies and prompt paths */
  id: 'v1' | 'v2';
  /** whether its endpoints and documents are served (an operator may turn Version 1 off: `versions.v1`) */
  served: boolean;
  /** the discovery `issuer` and the ID tokens' `iss` (D1) */
  issuer: string;
  /** D1's per-client override: the issuer a client flagged `legacyV2Issuer` gets as `iss` instead */
  legacyIssuer?: string;
  /** where the provider instance is mounted (the issuer's path relative to the base URL) */
  providerMount: string;
  /** provider routes, relative to providerMount */
  routes: { authorization: string; pushed_authorization_request: string; token: string; jwks: string };
  paths: {
    discovery: string;
    jwks: string;
    par: string;
    authorize: string;
    token: string;
    /** OIDC Core §5.3, an addition beyond the interface: takes the token response's access_token (D3) */
    userinfo: string;
    /**
     * Where discovery from the issuer looks (OIDC Discovery 1.0 §4: the issuer and
     * `/.well-known/openid-configuration`), when that is not `discovery` and nothing else answers there:
     * Version 2's document at the root once Version 1 is off
     */
    issuerDiscovery?: string;
    /** Version 1 only: the root document and its non-PAR authorise endpoint */
    rootDiscovery?: string;
    rootJwks?: string;
    authorizeNonPar?: string;
  };
  /** whether authorise accepts requests without request_uri (Version 2: yes; Version 1: only at authorizeNonPar) */
  nonParAtAuthorize: boolean;
  /** whether PKCE parameters are accepted at PAR (spec: Version 1 PAR has no code_challenge) */
  pkceAtPar: boolean;
  /** spec Scope format: an issuance scope must contain `openid` (Version 2) or must not (Version 1) */
  issuanceOpenid: 'required' | 'forbidden';
  /** spec Scope format: the scope External (External Client flows, D13) exists in Version 2 only */
  externalFlows: boolean;
  /** the PAR discovery document (spec: OpenID configuration document, per version) */
  parDocument: {
    require_pushed_authorization_requests: boolean;
    /** carries subject_types_supported, request_parameter_supported and code_challenge_methods_supported */
    full: boolean;
    /** carries subject_types_supported, which OIDC Discovery 1.0 §3 requires (an operator's choice where the interface omits it) */
    subjectTypes: boolean;
  };
}

/**
 * The operator's choices (config `versions`): whether Version 1 is served, and Version 2's issuer: the
 * interface's `{base_url}`, or `{base_url}/v2.0`, where its document is, so that discovery from the issuer
 * finds it (OIDC Discovery 1.0 §4).
 */
export interface VersionSettings {
  v1: boolean;
  v2Issuer: 'base' | 'v2.0';
  v1ParDocument: 'interface' | 'oidc-discovery';
}
export const INTERFACE_VERSIONS: VersionSettings = { v1: true, v2Issuer: 'base', v1ParDocument: 'interface' };

export function versionProfiles(
  baseUrl: string,
  chosen: Partial<VersionSettings> = {},
): { v1: VersionProfile; v2: VersionProfile } {
  const settings = { ...INTERFACE_VERSIONS, ...chosen };
  const v2Issuer = settings.v2Issuer === 'v2.0' ? `${baseUrl}/v2.0` : baseUrl;
  const v2: VersionProfile = {
    id: 'v2',
    served: true,
    issuer: v2Issuer,
    legacyIssuer: `${baseUrl}/oidc`,
    providerMount: '/',
    routes: {
      authorization: '/v2.0/oidc/authorize',
      pushed_authorization_request: '/v2.0/oidc/par',
      token: '/v2.0/oidc/token',
      jwks: '/v2.0/.well-known/openid-configuration/jwks',
    },
    paths: {
      discovery: '/v2.0/.well-known/openid-configuration',
      jwks: '/v2.0/.well-known/openid-configuration/jwks',
      par: '/v2.0/oidc/par',
      authorize: '/v2.0/oidc/authorize',
      token: '/v2.0/oidc/token',
      userinfo: '/v2.0/oidc/userinfo',
      // without Version 1 the root document is free: discovery from the issuer {base_url} finds Version 2's
      ...(!settings.v1 && v2Issuer === baseUrl ? { issuerDiscovery: '/.well-known/openid-configuration' } : {}),
    },
    nonParAtAuthorize: true,
    pkceAtPar: true,
    issuanceOpenid: 'required',
    externalFlows: true,
    parDocument: { require_pushed_authorization_requests: false, full: true, subjectTypes: true },
  };
  const v1: VersionProfile = {
    id: 'v1',
    served: settings.v1,
    issuer: `${baseUrl}/oidc`,
    providerMount: '/oidc',
    routes: {
      authorization: '/authorize',
      pushed_authorization_request: '/par',
      token: '/token',
      jwks: '/.well-known/openid-configuration/jwks',
    },
    paths: {
      discovery: '/oidc/.well-known/openid-configuration',
      jwks: '/oidc/.well-known/openid-configuration/jwks',
      par: '/oidc/par',
      authorize: '/oidc/authorize',
      token: '/oidc/token',
      userinfo: '/oidc/userinfo',
      rootDiscovery: '/.well-known/openid-configuration',
      rootJwks: '/.well-known/openid-configuration/jwks',
      authorizeNonPar: '/oidc/authorizev1',
    },
    nonParAtAuthorize: false,
    pkceAtPar: false,
    issuanceOpenid: 'forbidden',
    externalFlows: false,
    parDocument: {
      require_pushed_authorization_requests: true,
      full: false,
      subjectTypes: settings.v1ParDocument === 'oidc-discovery',
    },
  };
  return { v1, v2 };
}
