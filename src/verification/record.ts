// A verification request as the store keeps it, its status and its result (src/verification/requests.ts keeps them).
import type { JWK } from 'jose';
import type { Say } from '../i18n/catalogues.js';
import type { AnnexCKey } from './annexC.js';

/** Which link the wallet came by: the QR code (another device) or the button on the holder's own device. */
export type Device = 'cross' | 'same';

/** What the holder's prompt page shows about a verification request (D10: live progress, errors a person understands). */
export type RequestStatus = {
  /**
   * returning: verified, waiting for the browser the wallet sends back (same-device, OpenID4VP 1.0 §8.2);
   * stalled: the wallet fetched the request and has not answered for a while; refused: the wallet answered
   * with an error other than access_denied. After either, the holder may ask for a fresh request.
   */
  status: 'pending' | 'scanned' | 'stalled' | 'refused' | 'returning' | 'done' | 'failed' | 'expired';
  message?: string;
  /** the message for the holder's page, in the holder's language there */
  say?: Say;
  /** failed, refused: what the relying party is told (error_description); names the rule, never a claim value */
  description?: string;
  /** scanned: when the wallet fetched the request (epoch seconds); kept in the store, not read out */
  since?: number;
};

export interface VerificationResult {
  /** RFC 7638 thumbprint of the first presented credential's `cnf.jwk`: the ID token `sub` (D2) */
  holderKeyThumbprint: string;
  /** the first presented credential's issuer */
  issuer: string;
  /** the value of the request's subject claim, when it has one and the holder disclosed it (D12) */
  subject?: unknown;
  /** one entry per requested attribute that was disclosed, from every requested type */
  claims: Record<string, unknown>;
  types: string[];
  /** per presented credential type, who vouched for it (the ID token's `vc_issuer` when a client asks) */
  issuers?: Record<string, VouchingIssuer>;
}

/** Who vouched for a presented credential: an SD-JWT VC's `iss`, or an mdoc's document signer and its IACA. */
export type VouchingIssuer =
  { format: 'dc+sd-jwt'; iss: string } | { format: 'mso_mdoc'; ds_subject: string; ds_issuer: string };

/** One verification request, kept while the wallet may answer it. Holds no claim values. */
export interface VerificationRecord {
  requestId: string;
  /** the credential types asked for (none for an identity request) */
  credentialTypes: string[];
  /** D12: a request for a person-identification credential, as the `identity.VerifiedIdentity` block asks */
  identity?: 'VerifiedIdentity';
  /** whom the claims are for: a pairwise subject is derived per client (D12) */
  clientId?: string;
  nonce: string;
  state: string;
  responseMode: 'direct_post' | 'direct_post.jwt';
  /** direct_post.jwt: this request's own ECDH-ES P-256 key (OpenID4VP 1.0 §8.3); only its public half leaves the service */
  encryptionKey?: JWK;
  /**
   * ISO/IEC 18013-7 Annex C, when every credential asked for has an mdoc form: the EncryptionInfo's nonce and
   * this request's own P-256 key, whose public half the `org-iso-mdoc` entry carries
   */
  annexC?: AnnexCKey;
  /** same-device: where the wallet sends the browser back, with a response_code (OpenID4VP 1.0 §8.2) */
  returnUri?: string;
  /** epoch seconds */
  createdAt: number;
  /** epoch seconds */
  expiresAt: number;
  /** the step is an External Client flow's (D13): its end is announced to the client */
  external?: boolean;
  /** the flow's root span context (a traceparent), when tracing is on; the wallet's requests link to it */
  trace?: string;
}
