/**
 * The two versions of the relying parties' side as the tests address them (docs/architecture.md,
 * Versions; src/oidc/versions.ts): endpoints, the discovery issuer (D1) and the form of issuance scopes.
 * Test files add what their own cases need (a client, PKCE) and run `describe.each(VERSIONS)`.
 */
export interface Version {
  v: 'v1' | 'v2';
  version: 1 | 2;
  /** how a test's name says which version it ran */
  tag: '(v1)' | '(v2)';
  /** path prefix of the version's endpoints */
  prefix: string;
  par: string;
  authorize: string;
  token: string;
  discovery: string;
  /** D1: the discovery issuer of the version at `base`: the `aud` of a hint and the `iss` of ID tokens */
  issuerAt: (base: string) => string;
  /** an issuance scope of `type` in this version's form (Version 2: with `openid`, Version 1: without) */
  issue: (type: string) => string;
}

export const VERSION_2: Version = {
  v: 'v2',
  version: 2,
  tag: '(v2)',
  prefix: '/v2.0/oidc',
  par: '/v2.0/oidc/par',
  authorize: '/v2.0/oidc/authorize',
  token: '/v2.0/oidc/token',
  discovery: '/v2.0/.well-known/openid-configuration',
  issuerAt: (base) => base,
  issue: (type) => `openid issue.${type}`,
};

export const VERSION_1: Version = {
  v: 'v1',
  version: 1,
  tag: '(v1)',
  prefix: '/oidc',
  par: '/oidc/par',
  authorize: '/oidc/authorize',
  token: '/oidc/token',
  discovery: '/oidc/.well-known/openid-configuration',
  issuerAt: (base) => `${base}/oidc`,
  issue: (type) => `issue.${type}`,
};

/** A version of a test file whose one service is at `base()`: its issuer there, and the other version's (a wrong `aud`). */
export interface VersionAt extends Version {
  issuer: () => string;
  otherIssuer: () => string;
}

/** Both versions (Version 2 first) for the service at `base()` (read when a test runs, after the service started). */
export function versionsAt(base: () => string): { V2: VersionAt; V1: VersionAt; VERSIONS: VersionAt[] } {
  const at = (version: Version, other: Version): VersionAt => ({
    ...version,
    issuer: () => version.issuerAt(base()),
    otherIssuer: () => other.issuerAt(base()),
  });
  const V2 = at(VERSION_2, VERSION_1);
  const V1 = at(VERSION_1, VERSION_2);
  return { V2, V1, VERSIONS: [V2, V1] };
}
