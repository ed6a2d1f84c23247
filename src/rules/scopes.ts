import { invalidScope } from './errors.js';
import { shown } from './text.js';

export type ScopeRequest =
  | { kind: 'issuance'; credentialType: string; scopes: string[]; external: boolean }
  | { kind: 'verification'; credentialTypes: string[]; scopes: string[]; external: boolean }
  | { kind: 'identity'; flow: IdentityScope; scopes: string[]; external: boolean };

const ISSUE_PREFIX = 'issue.';
/** spec Scope format: marks an External Client flow (Version 2) */
export const EXTERNAL = 'External';
/** spec Scope format: the first (a PID presented from a wallet) and the second (another provider) identity-verification flow (D12) */
export const IDENTITY_SCOPES = ['VerifiedIdentity', 'VerifiedIdentity_Other'] as const;
export type IdentityScope = (typeof IDENTITY_SCOPES)[number];
export const isIdentityScope = (value: string): value is IdentityScope =>
  (IDENTITY_SCOPES as readonly string[]).includes(value);

export interface ScopeOptions {
  issuanceOpenid: 'required' | 'forbidden';
  externalFlows: boolean;
  clientScopes: readonly string[];
  credentialTypes: readonly string[];
  /** configured types that are verified only (`verifyOnly`): never `issue.<CredentialType>` */
  verifyOnlyTypes?: readonly string[];
}

/** The values of a scope sorted by what they name, each checked against the client and the configuration. */
interface ClassifiedScopes {
  issuance: string[];
  verification: string[];
  identity: IdentityScope[];
  external: boolean;
}

/**
 * Parses and validates a `scope` parameter (spec: Scope format; errors: Scope "Not provided or not
 * registered" -> invalid_scope).
 */
export function parseScope(scope: unknown, opts: ScopeOptions): ScopeRequest {
  // spec Errors, Scope: "Not provided" -> invalid_scope
  if (typeof scope !== 'string' || scope.trim() === '') throw invalidScope('scope is required');

  // spec Scope format: "Scope is a space-separated list"; repeated values collapse (order kept)
  const scopes = [...new Set(scope.trim().split(/\s+/))];
  const classified = classifyScopes(scopes, opts);
  const hasOpenid = scopes.includes('openid');

  if (classified.identity.length > 0) return identityRequest(classified, scopes, hasOpenid);

  // spec Scope format: a request is either issuance or verification, never both
  if (classified.issuance.length > 0 && classified.verification.length > 0) {
    throw invalidScope('scope must not mix issue.<CredentialType> with verification credential types');
  }
  if (classified.issuance.length > 0) return issuanceRequest(classified, scopes, hasOpenid, opts);
  return verificationRequest(classified, scopes, hasOpenid);
}

/** Sorts each scope value (openid aside) into its kind; an unregistered or unknown value is invalid_scope. */
function classifyScopes(scopes: readonly string[], opts: ScopeOptions): ClassifiedScopes {
  const classified: ClassifiedScopes = { issuance: [], verification: [], identity: [], external: false };
  for (const value of scopes) {
    if (value === 'openid') continue;
    // spec Scope format: External marks an External Client flow; Version 1 does not describe it
    if (value === EXTERNAL && !opts.externalFlows)
      throw invalidScope(`scope ${EXTERNAL} is not available in Version 1`);
    // spec Errors, Scope: "not registered" -> the client must have this scope registered
    if (!opts.clientScopes.includes(value)) {
      throw invalidScope(`scope ${shown(value)} is not registered for this client`);
    }
    if (value === EXTERNAL) {
      classified.external = true;
      continue;
    }
    if (isIdentityScope(value)) {
      classified.identity.push(value);
      continue;
    }
    const isIssue = value.startsWith(ISSUE_PREFIX);
    const typeName = isIssue ? value.slice(ISSUE_PREFIX.length) : value;
    // spec Scope format: `issue.<CredentialType>` / `<CredentialType>` name a configured type
    if (!opts.credentialTypes.includes(typeName)) {
      throw invalidScope(`scope ${shown(value)} does not name a configured credential type`);
    }
    // a type verified only is not issued here, whatever a client's registration says
    if (isIssue && opts.verifyOnlyTypes?.includes(typeName))
      throw invalidScope(`scope ${shown(value)} names a type that is verified only; this service does not issue it`);
    (isIssue ? classified.issuance : classified.verification).push(typeName);
  }
  return classified;
}

function identityRequest(
  { issuance, verification, identity, external }: ClassifiedScopes,
  scopes: string[],
  hasOpenid: boolean,
): ScopeRequest {
  // spec Scope format: an identity-verification flow is a flow of its own, selected by its one scope
  if (identity.length > 1) throw invalidScope(`scope must contain one of ${IDENTITY_SCOPES.join(', ')}, not both`);
  if (issuance.length > 0 || verification.length > 0)
    throw invalidScope(`scope must not mix ${identity[0]} with credential types`);
  // spec Scope format, identity-verification flows: "must contain openid"
  if (!hasOpenid) throw invalidScope(`scope must contain openid for ${identity[0]}`);
  // D12: the second provider's journey ends in a browser (the holder's, or one it was continued in with context_id)
  if (external && identity[0] === 'VerifiedIdentity_Other')
    throw invalidScope(
      `scope ${EXTERNAL} does not combine with VerifiedIdentity_Other: its journey ends in the holder's browser`,
    );
  return { kind: 'identity', flow: identity[0], scopes, external };
}

function issuanceRequest(
  { issuance, external }: ClassifiedScopes,
  scopes: string[],
  hasOpenid: boolean,
  opts: ScopeOptions,
): ScopeRequest {
  // spec Scope format, Issuance: "Exactly one scope issue.<CredentialType>"
  if (issuance.length > 1) throw invalidScope('scope must contain exactly one issue.<CredentialType>');
  // spec Scope format, Issuance (Version 2): "must also contain openid"
  if (opts.issuanceOpenid === 'required' && !hasOpenid)
    throw invalidScope('scope must contain openid for Version 2 issuance');
  // spec Scope format, Version 1 differences: "issuance scope must NOT contain openid"
  if (opts.issuanceOpenid === 'forbidden' && hasOpenid)
    throw invalidScope('scope must not contain openid for Version 1 issuance');
  return { kind: 'issuance', credentialType: issuance[0], scopes, external };
}

function verificationRequest(
  { verification, external }: ClassifiedScopes,
  scopes: string[],
  hasOpenid: boolean,
): ScopeRequest {
  // spec Scope format, Verification: "One or more <CredentialType> scopes"
  if (verification.length === 0) throw invalidScope('scope must contain a credential type');
  // spec Scope format, Verification: "must contain openid" (both versions)
  if (!hasOpenid) throw invalidScope('scope must contain openid for verification');
  return { kind: 'verification', credentialTypes: verification, scopes, external };
}
