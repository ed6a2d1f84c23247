/**
 * The dev wallet's side of OpenID4VP 1.0: the shapes of a resolved request, and (re-exported) resolving it
 * (requestResolution.ts), choosing credentials (selection.ts) and building and sending the answer (answer.ts).
 */
import type { JWK } from 'jose';
import type { StoredCredential } from './walletFile.js';

export {
  parseRequestReference,
  resolveRequest,
  REQUEST_OBJECT_TYPE,
  WALLET_METADATA,
  walletMetadataFor,
} from './requestResolution.js';
export { claimsToDisclose, mdocElementsToDisclose, selectCredentials, type Selection } from './selection.js';
export { createPresentation, holderSigner, presentationFor, submitResponse } from './answer.js';

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

/**
 * Picks the credential to present for one Credential Query; `candidates` are those of the format and type
 * (vct or doctype) it asks for whose claims satisfy it.
 */
export type CredentialSelector = (
  query: CredentialQuery,
  candidates: StoredCredential[],
  all: StoredCredential[],
) => StoredCredential | undefined;
