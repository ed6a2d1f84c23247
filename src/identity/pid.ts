import type { PidFlowConfig } from '../config/schema.js';
import type { Texts } from '../i18n/catalogues.js';
import { EN, type MessageId } from '../i18n/en.js';
import type { FlowClaims } from '../flow/flowClaims.js';
import { mdocCredentialQuery, sdJwtCredentialQuery } from '../verification/dcql.js';
import { pidMdocElement } from '../rules/pidMdoc.js';
import type { VerificationResult } from '../verification/record.js';
import type { IdentityRequestKind } from '../verification/verifier.js';
import type { PairwiseSubjects } from './subject.js';

/** The Credential Query id of the PID in a VerifiedIdentity request (and in the wallet's vp_token). */
export const PID_QUERY_ID = 'pid';
/** The Credential Query id of the PID as an mdoc (identity.VerifiedIdentity.mdoc). */
export const PID_MDOC_QUERY_ID = 'pid-mdoc';

/**
 * The claims a VerifiedIdentity request asks for that a PID need not have, in order of preference: the
 * subject claim first, then optionalClaims as configured (what the prompt lists as optional too).
 */
export function pidOptionalClaims(block: PidFlowConfig): string[] {
  return [...new Set([...(block.subjectClaim ? [block.subjectClaim] : []), ...block.optionalClaims])].filter(
    (name) => !block.claims.includes(name),
  );
}

/**
 * What the prompt calls each claim in the page's language: the block's `labels`, else the catalogue's
 * label of a standard PID claim (`claim.<name>`); a claim with neither keeps its humanised name.
 */
export function pidClaimLabels(block: PidFlowConfig, texts: Texts, names: string[]): Record<string, string> {
  return Object.fromEntries(
    names.flatMap((name) => {
      const configured = Object.hasOwn(block.labels ?? {}, name) ? texts.pick(block.labels[name]) : undefined;
      const id = `claim.${name}`;
      const label = configured ?? (Object.hasOwn(EN, id) ? texts.t(id as MessageId) : undefined);
      return label ? [[name, label]] : [];
    }),
  );
}

/**
 * D12, VerifiedIdentity: the OpenID4VP request for a person-identification credential. One `dc+sd-jwt`
 * Credential Query for the configured PID types, asking for the required claims, the optional ones and
 * (optional too) the subject claim; only the block's trusted issuers are accepted. With `mdoc`, the PID as an
 * mdoc too (PID Rulebook, ISO/IEC 18013-5 encoding): one `credential_sets` entry offers either (OpenID4VP 1.0
 * §6.2), the mdoc's query asks for the elements the claims are read from and names the PID's IACAs by `aki`
 * (§6.1.1.1), and the result carries the claims under the SD-JWT VC PID's names.
 */
export function pidRequestKind(block: PidFlowConfig, aki: string[] = []): IdentityRequestKind {
  const optional = pidOptionalClaims(block);
  const asked = [
    ...block.claims.map((name) => ({ name, required: true })),
    ...optional.map((name) => ({ name, required: false })),
  ];
  // claim_sets (claimSetsFor): the PID discloses every optional claim it has, whatever else it lacks
  const query = sdJwtCredentialQuery(PID_QUERY_ID, block.vct, asked);
  // the subject claim goes into the ID token only when it is also listed as a claim
  const inToken = [...block.claims, ...block.optionalClaims];
  const kind: IdentityRequestKind = {
    query: { credentials: [query] },
    claimNames: new Map([[PID_QUERY_ID, inToken]]),
    subjectClaim: block.subjectClaim,
    trustedIssuers: block.trustedIssuers,
  };
  if (!block.mdoc) return kind;
  const mdoc = block.mdoc;
  // a claim the mdoc has no element for is asked for from the SD-JWT VC PID only (the schema keeps required ones mappable)
  const elements = new Map(
    asked.flatMap((c) => {
      const element = pidMdocElement(c.name, mdoc.elements);
      return element === undefined ? [] : [[c.name, element] as const];
    }),
  );
  const mdocQuery = mdocCredentialQuery(
    PID_MDOC_QUERY_ID,
    mdoc,
    asked.filter((c) => elements.has(c.name)).map((c) => ({ name: elements.get(c.name)!, required: c.required })),
    aki,
  );
  return {
    ...kind,
    query: {
      credentials: [query, mdocQuery],
      credential_sets: [{ options: [[PID_QUERY_ID], [PID_MDOC_QUERY_ID]], required: true }],
    },
    claimNames: new Map([
      [PID_QUERY_ID, inToken],
      [PID_MDOC_QUERY_ID, inToken.filter((name) => elements.has(name))],
    ]),
    mdocNamespaces: new Map([[PID_MDOC_QUERY_ID, mdoc.namespace]]),
    // the same type as the SD-JWT VC PID's (result.types, vc_issuer), whichever form answered
    typeNames: new Map([[PID_MDOC_QUERY_ID, PID_QUERY_ID]]),
    claimElements: new Map([[PID_MDOC_QUERY_ID, elements]]),
  };
}

/**
 * D12: the ID token of a VerifiedIdentity flow: the presented PID claims under their own names, and a
 * pairwise `sub` (OIDC Core §8.1), from the PID's issuer and subject claim when that is configured and
 * presented (the same person gets the same `sub` with every new PID or wallet), else from the holder key.
 */
export function pidFlowClaims(result: VerificationResult, clientId: string, subjects: PairwiseSubjects): FlowClaims {
  const subject =
    typeof result.subject === 'string' || typeof result.subject === 'number' ? String(result.subject) : undefined;
  const local = subject !== undefined ? ['pid', result.issuer, subject] : ['holder-key', result.holderKeyThumbprint];
  return { sub: subjects.of(clientId, local), claims: result.claims };
}
