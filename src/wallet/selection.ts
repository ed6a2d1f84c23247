import type { CredentialQuery, CredentialSelector, PresentationRequest } from './presentation.js';
import type { StoredCredential, StoredMdoc, StoredSdJwt } from './walletFile.js';

type ClaimsQuery = NonNullable<CredentialQuery['claims']>[number];

/**
 * Where one Claims Query points in a stored credential (claims path pointer, §7): a top-level claim of an
 * SD-JWT VC, or `[namespace, element]` of an mdoc (§7.2). Nested paths are not supported. With `values`
 * (§6.3) the claim counts only when its value is one of them (mdoc values as read, compared as JSON, §6.3).
 */
function locate(claim: ClaimsQuery, credential: StoredCredential): { namespace?: string; name: string } | undefined {
  const matches = (value: unknown) =>
    !claim.values || claim.values.some((v) => v === value || JSON.stringify(v) === JSON.stringify(value));
  if (credential.format === 'mso_mdoc') {
    const [namespace, name] = claim.path;
    if (claim.path.length !== 2 || typeof namespace !== 'string' || typeof name !== 'string') return undefined;
    const elements = credential.claims[namespace];
    if (!elements || !Object.hasOwn(elements, name) || !matches(elements[name])) return undefined;
    return { namespace, name };
  }
  const [name] = claim.path;
  if (claim.path.length !== 1 || typeof name !== 'string') return undefined;
  if (!Object.hasOwn(credential.claims, name) || !matches(credential.claims[name])) return undefined;
  return { name };
}

/** The claims of the first option (§6.4.1: `claim_sets` in order, else all `claims`) the credential satisfies. */
function satisfiedClaims(
  query: CredentialQuery,
  credential: StoredCredential,
): Array<{ namespace?: string; name: string }> | undefined {
  if (!query.claims) return [];
  const byId = new Map(query.claims.map((claim, i) => [claim.id ?? String(i), claim]));
  const options = query.claim_sets ?? [query.claims.map((claim, i) => claim.id ?? String(i))];
  for (const option of options) {
    const located = option.map((id) => (byId.has(id) ? locate(byId.get(id)!, credential) : undefined));
    if (located.every((l) => l !== undefined)) return located as Array<{ namespace?: string; name: string }>;
  }
  return undefined;
}

/** The first option of the query's claims (§6.4.1) the credential can satisfy, as claim names to disclose. */
export function claimsToDisclose(query: CredentialQuery, credential: StoredCredential): string[] | undefined {
  return satisfiedClaims(query, credential)?.map((c) => c.name);
}

/**
 * The mdoc elements to disclose for a query: those of the first option the mdoc satisfies, all in one
 * namespace (what the dev wallet's DeviceResponse carries). Without `claims`, no element (§6.4.1: only what
 * is mandatory to present), in the mdoc's first namespace.
 */
export function mdocElementsToDisclose(
  query: CredentialQuery,
  credential: StoredMdoc,
): { namespace: string; elements: string[] } | undefined {
  const claims = satisfiedClaims(query, credential);
  if (!claims) return undefined;
  const namespaces = new Set(claims.map((c) => c.namespace!));
  if (namespaces.size > 1) return undefined;
  const namespace = [...namespaces][0] ?? Object.keys(credential.claims)[0] ?? credential.doctype;
  return { namespace, elements: claims.map((c) => c.name) };
}

const firstCandidate: CredentialSelector = (_query, candidates) => candidates[0];

/** One Credential Query and what answers it: an SD-JWT VC and the claims to disclose, or an mdoc and its elements. */
export type Selection =
  | { query: CredentialQuery; credential: StoredSdJwt; disclose: string[] }
  | { query: CredentialQuery; credential: StoredMdoc; disclose: string[]; namespace: string };

const SUPPORTED_FORMATS = ['dc+sd-jwt', 'mso_mdoc'];

/** §B.3.5 `vct_values` / §B.2.3 `doctype_value`: the types a query accepts, for messages and matching. */
function typesOf(query: CredentialQuery): string[] {
  if (query.format === 'mso_mdoc') return query.meta?.doctype_value !== undefined ? [query.meta.doctype_value] : [];
  return query.meta?.vct_values ?? [];
}

function isOfType(query: CredentialQuery, credential: StoredCredential): boolean {
  if (credential.format !== query.format) return false;
  return typesOf(query).includes(credential.format === 'mso_mdoc' ? credential.doctype : credential.vct);
}

/**
 * For each Credential Query to answer a stored credential of its format and type (vct or doctype) whose
 * claims satisfy it. With `credential_sets` (§6.2, §6.4.2), per set the first option whose every query
 * the wallet can answer (optional sets only when it can); without them, every query. A query chosen by
 * several sets is answered once.
 */
export function selectCredentials(
  request: PresentationRequest,
  credentials: StoredCredential[],
  select: CredentialSelector = firstCandidate,
): Selection[] | { missing: string } {
  const byId = new Map(request.credentials.map((q) => [q.id, q]));
  const picked = new Map<string, Selection | { missing: string }>();
  const pick = (id: string): Selection | { missing: string } => {
    if (picked.has(id)) return picked.get(id)!;
    const query = byId.get(id);
    let result: Selection | { missing: string };
    if (!query) result = { missing: `${id} (not a credential query of the request)` };
    else if (!SUPPORTED_FORMATS.includes(query.format))
      result = { missing: `${query.id} (format ${query.format} is not supported by the dev wallet)` };
    else {
      const candidates = credentials.filter((c) => isOfType(query, c) && satisfiedClaims(query, c) !== undefined);
      const credential = select(query, candidates, credentials);
      if (!credential) result = { missing: `${query.id} (${typesOf(query).join(', ') || 'any type'})` };
      else if (credential.format === 'mso_mdoc') {
        // a selector may pick any credential (tests present what a verifier must refuse): disclose what fits
        const { namespace, elements } = mdocElementsToDisclose(query, credential) ?? {
          namespace: Object.keys(credential.claims)[0] ?? credential.doctype,
          elements: [],
        };
        result = { query, credential, disclose: elements, namespace };
      } else result = { query, credential, disclose: claimsToDisclose(query, credential) ?? [] };
    }
    picked.set(id, result);
    return result;
  };
  const sets = request.credentialSets ?? [{ options: [request.credentials.map((q) => q.id)], required: true }];
  const chosen = new Map<string, Selection>();
  for (const set of sets) {
    const lacking: string[] = [];
    const option = set.options.find((ids) => {
      const missing = ids.map(pick).find((p): p is { missing: string } => 'missing' in p);
      if (missing) lacking.push(missing.missing);
      return !missing;
    });
    if (option) for (const id of option) chosen.set(id, pick(id) as Selection);
    else if (set.required !== false) return { missing: lacking.join(' or ') };
  }
  return [...chosen.values()];
}
