import type { CredentialType } from '../config/schema.js';
import { asksSdJwt, dcqlQueryFor, mdocQueryId } from './dcql.js';
import type { Expectations } from './deps.js';
import type { IssuerKeys } from './issuerKeys.js';
import type { VerificationRecord } from './record.js';
import type { IdentityRequestKind } from './types.js';

/** Where a request's expectations come from: the configured types, and the identity request (D12). */
export interface ExpectationSources {
  baseUrl: string;
  credentialTypes: ReadonlyMap<string, CredentialType>;
  /** the credential issuers' keys (this service's wallet issuer and the trustedIssuers) */
  issuerKeys: IssuerKeys;
  /** per type, the key identifiers of the roots that may vouch for its mdoc (OpenID4VP 1.0 §6.1.1.1) */
  aki(type: string): string[];
  /** per type, the key identifiers a wallet is told for its SD-JWT VC (HAIP 1.0 §5); none when others vouch too */
  sdJwtAki(type: string): string[];
  /** D12: a PID is accepted from the identity block's issuers only, never from the credential issuers */
  identity?: { kind: IdentityRequestKind; issuerKeys: IssuerKeys };
}

/** What a request asks for, whose credentials it accepts, and which claims it reads. */
export function expectationsFor(record: VerificationRecord, sources: ExpectationSources): Expectations {
  if (record.identity) {
    if (!sources.identity) throw new Error('identity requests are not configured');
    return { ...sources.identity.kind, issuerKeys: sources.identity.issuerKeys };
  }
  const requested = record.credentialTypes.map((name) => sources.credentialTypes.get(name)!);
  const claimNames = new Map<string, readonly string[]>();
  const mdocNamespaces = new Map<string, string>();
  const typeNames = new Map<string, string>();
  for (const t of requested) {
    if (asksSdJwt(t, sources.baseUrl)) claimNames.set(t.name, Object.keys(t.attributes));
    if (t.mdoc) {
      claimNames.set(mdocQueryId(t.name), Object.keys(t.attributes));
      mdocNamespaces.set(mdocQueryId(t.name), t.mdoc.namespace);
      typeNames.set(mdocQueryId(t.name), t.name);
    }
  }
  return {
    query: dcqlQueryFor(requested, sources.baseUrl, sources.aki, sources.sdJwtAki),
    claimNames,
    mdocNamespaces,
    typeNames,
    issuerKeys: sources.issuerKeys,
  };
}
