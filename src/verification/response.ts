import type { Document } from '@owf/mdoc';
import { answeredOption, missingClaims, satisfiedOption, topLevelClaimName, type DcqlQuery } from './dcql.js';
import { VerificationRefusal } from './errors.js';
import { MDOC_FORMAT } from '../rules/formats.js';
import { withAgeAnswers } from '../rules/ageOver.js';
import { verifyMdocPresentation, type MdocExpectations } from './mdoc.js';
import { checkOwnMdocStatus } from './credentialStatus.js';
import { verifyPresentation, type PresentationContext } from './presentation.js';
import type { AnchorFormat } from '../keys/trustAnchors.js';
import type { VerificationResult, VouchingIssuer } from './record.js';

/** The largest `vp_token` accepted, in bytes. */
export const VP_TOKEN_LIMIT = 1024 * 1024;
/**
 * The largest form body accepted at the response endpoint: a `vp_token` at its limit, form-encoded (JSON
 * punctuation and `~` are percent-encoded, up to three bytes for one), plus room for `state` and the rest.
 */
export const RESPONSE_BODY_LIMIT = 3 * VP_TOKEN_LIMIT + 64 * 1024;

/**
 * Reads a `vp_token` of a DCQL response (OpenID4VP 1.0 §8.1): a JSON object (a string in a `direct_post` form,
 * an object in a decrypted `direct_post.jwt` response) whose keys are Credential Query ids of this request
 * and whose values are arrays of presentations, one unless the query allows `multiple`; a `dc+sd-jwt`
 * presentation is a string (§B.3), an `mso_mdoc` one a base64url string (§B.2). Every Credential Query must be
 * answered, or with `credential_sets` one option of every required set (§6.2), and nothing else. Returns
 * query id -> presentation, in query order.
 */
export function readVpToken(raw: unknown, query: DcqlQuery): Map<string, string> {
  if (raw === undefined) throw new VerificationRefusal('malformed_response', 'vp_token: required');
  let parsed: unknown = raw;
  if (typeof raw === 'string') {
    if (Buffer.byteLength(raw, 'utf8') > VP_TOKEN_LIMIT)
      throw new VerificationRefusal('vp_token_too_large', `vp_token: exceeds ${VP_TOKEN_LIMIT} bytes`);
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw new VerificationRefusal(
        'malformed_response',
        'vp_token: not valid JSON; expected a JSON object keyed by credential query id',
      );
    }
  } else if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new VerificationRefusal(
      'malformed_response',
      'vp_token: must appear once, as a string or (encrypted) a JSON object',
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new VerificationRefusal('malformed_response', 'vp_token: must be a JSON object keyed by credential query id');
  }
  const queries = new Map(query.credentials.map((q) => [q.id, q]));
  const entries = parsed as Record<string, unknown>;
  for (const id of Object.keys(entries)) {
    if (!queries.has(id))
      throw new VerificationRefusal(
        'unrequested_credential',
        'vp_token: a key is not the id of any credential query of this request',
      );
  }
  const answered = answeredOption(query, new Set(Object.keys(entries)));
  if ('unanswered' in answered) {
    const [first] = answered.unanswered;
    throw new VerificationRefusal(
      'missing_credential',
      query.credential_sets
        ? `vp_token: none of ${answered.unanswered.map((o) => o.join(' and ')).join(' or ')} is answered; every credential of this request must be presented`
        : `vp_token.${first[0]}: missing; every credential query of this request must be answered`,
    );
  }
  const chosen = new Set(answered.ids);
  for (const id of Object.keys(entries)) {
    if (!chosen.has(id))
      throw new VerificationRefusal(
        'unrequested_credential',
        `vp_token.${id}: an alternative to a credential already presented`,
      );
  }
  const presentations = new Map<string, string>();
  for (const [id, q] of queries) {
    if (!chosen.has(id)) continue;
    const value = entries[id];
    if (!Array.isArray(value) || value.length === 0)
      throw new VerificationRefusal('malformed_response', `vp_token.${id}: must be a non-empty array of presentations`);
    if (value.length > 1 && !q.multiple)
      throw new VerificationRefusal('too_many_presentations', `vp_token.${id}: exactly one presentation is expected`);
    if (typeof value[0] !== 'string' || value[0] === '')
      throw new VerificationRefusal(
        'malformed_response',
        `vp_token.${id}[0]: a ${q.format} presentation must be a non-empty string`,
      );
    presentations.set(id, value[0]);
  }
  return presentations;
}

export interface ResponseExpectations {
  query: DcqlQuery;
  /** per Credential Query id, the claims that go into the result when disclosed */
  claimNames: ReadonlyMap<string, readonly string[]>;
  /** per mso_mdoc Credential Query id, the namespace of its claims */
  mdocNamespaces?: ReadonlyMap<string, string>;
  /** per Credential Query id, the credential type it asks for, when that is not the id */
  typeNames?: ReadonlyMap<string, string>;
  /**
   * per mso_mdoc Credential Query id, claim -> the element it is read from, where they differ (D12: the PID's
   * `birthdate` is its mdoc's `birth_date`); the result names the claim
   */
  claimElements?: ReadonlyMap<string, ReadonlyMap<string, string>>;
  /** a claim read into the result's `subject` when disclosed (D12: a persistent identifier), not into its claims */
  subjectClaim?: string;
  clientId: string;
  nonce: string;
  responseUri: string;
  /** the RFC 7638 thumbprint of the request's encryption key when the response was encrypted (mdoc SessionTranscript, §B.2.6.1) */
  jwkThumbprint?: Uint8Array;
  /** through the Digital Credentials API: the page's origin, bound by the mdoc's OpenID4VPDCAPIHandover (Appendix A.5) */
  origin?: string;
  /** ISO/IEC 18013-7 Annex C: the `dcapi` SessionTranscript the mdocs' device signatures cover */
  annexCTranscript?: unknown[];
  /** the DER roots that may vouch for a credential type in a format; none when left out */
  anchorsFor?: (format: AnchorFormat, type: string) => Uint8Array[];
}

/** What an mdoc of `query` must be bound to and trusted by: the request's, and the anchors of its type. */
const mdocExpectations = (
  expected: ResponseExpectations,
  query: DcqlQuery['credentials'][number],
  namespace: string,
  type: string,
): MdocExpectations => ({
  doctype: query.meta.doctype_value ?? '',
  namespace,
  clientId: expected.clientId,
  nonce: expected.nonce,
  responseUri: expected.responseUri,
  jwkThumbprint: expected.jwkThumbprint,
  ...(expected.origin !== undefined ? { origin: expected.origin } : {}),
  ...(expected.annexCTranscript ? { annexCTranscript: expected.annexCTranscript } : {}),
  trustAnchors: expected.anchorsFor?.('mso_mdoc', type) ?? [],
});

/** One mdoc, then (last, as an SD-JWT VC's status: a bad presentation never causes a lookup) our own mdocs' status. */
async function verifyMdoc(presentation: string | Document, expected: MdocExpectations, ctx: PresentationContext) {
  const mdoc = await verifyMdocPresentation(presentation, expected, {
    now: ctx.now,
    clockTolerance: ctx.clockTolerance,
  });
  await checkOwnMdocStatus(mdoc.msoDigest, ctx);
  return mdoc;
}

/**
 * Verifies every presentation against its Credential Query (OpenID4VP 1.0 §8.6): the presentation itself
 * (signature, trust, vct, validity, disclosures, key binding), then the claims the query requires
 * (§6.4.1: one of its claim sets fully disclosed). Any failure refuses the whole response: every
 * Credential Query is required. The result carries, per expected claim that was disclosed, its value;
 * when two types share an attribute name, the first type asked for wins.
 */
export async function verifyResponse(
  /** query id -> presentation; an Annex C answer's documents come decoded (src/verification/mdocDocument.ts annexCDocuments) */
  presentations: Map<string, string | Document>,
  expected: ResponseExpectations,
  ctx: PresentationContext,
): Promise<VerificationResult> {
  const claims: Record<string, unknown> = {};
  const issuers: Record<string, VouchingIssuer> = {};
  let first: { holderKeyThumbprint: string; issuer: string; subject?: unknown } | undefined;
  const answered = expected.query.credentials.filter((q) => presentations.has(q.id));
  for (const credentialQuery of answered) {
    const presentation = presentations.get(credentialQuery.id)!;
    const namespace = expected.mdocNamespaces?.get(credentialQuery.id);
    const type = expected.typeNames?.get(credentialQuery.id) ?? credentialQuery.id;
    let verified: { claims: Record<string, unknown>; holderKeyThumbprint: string; issuer: string };
    try {
      if (credentialQuery.format === MDOC_FORMAT && namespace !== undefined) {
        const mdoc = await verifyMdoc(presentation, mdocExpectations(expected, credentialQuery, namespace, type), ctx);
        issuers[type] = { format: 'mso_mdoc', ds_subject: mdoc.documentSigner, ds_issuer: mdoc.issuer };
        // ISO/IEC 18013-5 §7.2.5: an age_over_NN asked for may be answered by the nearest one the mdoc holds
        const asked = (credentialQuery.claims ?? []).flatMap((c) =>
          c.path.length === 2 && c.path[0] === namespace && typeof c.path[1] === 'string' ? [c.path[1]] : [],
        );
        verified = { ...mdoc, claims: withAgeAnswers(mdoc.claims, asked) };
      } else if (typeof presentation !== 'string') {
        throw new VerificationRefusal('unrequested_credential', 'an mdoc answers a query for another format');
      } else {
        // the anchors of this type alone: an anchor for another type (or format) vouches for nothing here
        verified = await verifyPresentation(
          presentation,
          { clientId: expected.clientId, nonce: expected.nonce, vct: credentialQuery.meta.vct_values ?? [] },
          { ...ctx, trustAnchors: expected.anchorsFor?.('dc+sd-jwt', type) ?? [] },
        );
        issuers[type] = { format: 'dc+sd-jwt', iss: verified.issuer };
      }
    } catch (err) {
      if (err instanceof VerificationRefusal)
        throw new VerificationRefusal(err.reason, `vp_token.${credentialQuery.id}: ${err.message}`);
      throw err;
    }
    const has = (claim: Parameters<typeof topLevelClaimName>[0]) => {
      // an mdoc claim's path is [namespace, element] (§B.2.3); the element is the attribute
      const name =
        namespace !== undefined
          ? claim.path.length === 2 && claim.path[0] === namespace && typeof claim.path[1] === 'string'
            ? claim.path[1]
            : undefined
          : topLevelClaimName(claim);
      return name !== undefined && Object.hasOwn(verified.claims, name);
    };
    if (!satisfiedOption(credentialQuery, has)) {
      throw new VerificationRefusal(
        'missing_claims',
        `vp_token.${credentialQuery.id}: the presentation does not disclose ${missingClaims(credentialQuery, has).join(', ')}`,
      );
    }
    const subject = takeClaims(expected, credentialQuery.id, verified.claims, claims);
    first ??= {
      holderKeyThumbprint: verified.holderKeyThumbprint,
      issuer: verified.issuer,
      ...(subject !== undefined ? { subject } : {}),
    };
  }
  return { ...first!, claims, types: answered.map((q) => expected.typeNames?.get(q.id) ?? q.id), issuers };
}

/**
 * Copies the query's expected claims that were disclosed into `claims` (the first type asked for wins a shared
 * name), each read from its element where the query names one (`claimElements`); returns the subject claim's
 * value when disclosed.
 */
function takeClaims(
  expected: ResponseExpectations,
  queryId: string,
  disclosed: Record<string, unknown>,
  claims: Record<string, unknown>,
): unknown {
  const elements = expected.claimElements?.get(queryId);
  const sourceOf = (name: string) => elements?.get(name) ?? name;
  for (const name of expected.claimNames.get(queryId) ?? []) {
    const source = sourceOf(name);
    if (Object.hasOwn(disclosed, source) && !Object.hasOwn(claims, name)) claims[name] = disclosed[source];
  }
  const subject = expected.subjectClaim === undefined ? undefined : sourceOf(expected.subjectClaim);
  return subject !== undefined && Object.hasOwn(disclosed, subject) ? disclosed[subject] : undefined;
}
