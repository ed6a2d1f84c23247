import type { CredentialType } from '../config/schema.js';
import { vctFor } from '../issuance/credentialConfigurations.js';
import { MDOC_FORMAT, SD_JWT_VC_FORMAT } from '../rules/formats.js';
import { isOwnVct } from '../keys/trustAnchors.js';

/**
 * Digital Credentials Query Language (OpenID4VP 1.0 §6). Only what this service asks for is typed:
 * @openid4vc/openid4vp 0.4 carries `dcql_query` as `any` and exports no DCQL types.
 */
export type ClaimsPathPointer = Array<string | number | null>;

/** OpenID4VP 1.0 §6.3 */
export interface DcqlClaimsQuery {
  id: string;
  path: ClaimsPathPointer;
  values?: Array<string | number | boolean>;
}

/** OpenID4VP 1.0 §6.1, with the SD-JWT VC `meta` of §B.3.5 and the mdoc one of §B.2.3 */
export interface DcqlCredentialQuery {
  id: string;
  format: string;
  multiple?: boolean;
  meta: { vct_values?: string[]; doctype_value?: string; [key: string]: unknown };
  trusted_authorities?: Array<{ type: string; values: string[] }>;
  require_cryptographic_holder_binding?: boolean;
  claims?: DcqlClaimsQuery[];
  claim_sets?: string[][];
}

export interface DcqlQuery {
  credentials: DcqlCredentialQuery[];
  credential_sets?: Array<{ options: string[][]; required?: boolean }>;
}

/**
 * One Credential Query for one credential type: id = the type's name (type names are letters, digits, `_`
 * and `-`, which is what §6.1 allows for ids), format `dc+sd-jwt`, `meta.vct_values` = the type's vct.
 */
export function credentialQueryFor(type: CredentialType, baseUrl: string, aki: string[] = []): DcqlCredentialQuery {
  const claims = Object.entries(type.attributes).map(([name, spec]) => ({ name, required: spec.required }));
  return sdJwtCredentialQuery(type.name, [vctFor(type, baseUrl)], claims, aki);
}

/**
 * Optional claims beyond this many are not offered in every combination: 2^4 = 16 claim sets, which every
 * wallet matches in no time and which keeps the Request Object small.
 */
export const MAX_CLAIM_SETS = 16;

/**
 * `claim_sets` (§6.4.1) for required and optional claims, `undefined` when every claim is required (then
 * all `claims` are requested). The wallet returns the first set it can satisfy and discloses only that
 * set, so each combination of optional claims a credential may have needs its own set: the required
 * claims with every subset of the optional ones, larger subsets first, among equal sizes the ones with
 * earlier (preferred) claims first. Then a credential discloses every optional claim it has, whatever
 * else it lacks. Up to 4 optional claims every subset is listed; beyond that the subsets are listed down
 * to the size where they would pass MAX_CLAIM_SETS, then the optional claims in order of preference, the
 * last dropped each time. A credential missing more than those sizes allow keeps the optional claims
 * before its first missing one. With no required claim the empty subset is left out: an empty
 * presentation never satisfies the query.
 */
export function claimSetsFor(required: readonly string[], optional: readonly string[]): string[][] | undefined {
  if (optional.length === 0) return undefined;
  const subsets: number[][] = [];
  const all = optional.map((_, i) => i);
  let size = optional.length;
  for (; size > 0; size--) {
    const level = combinations(all, size);
    // room is kept for the required claims alone
    if (subsets.length + level.length > MAX_CLAIM_SETS - 1) break;
    subsets.push(...level);
  }
  // beyond the exact sizes: the preferred optional claims, one fewer each time
  for (; size > 0; size--) subsets.push(all.slice(0, size));
  if (required.length > 0) subsets.push([]);
  return subsets.map((subset) => [...required, ...subset.map((i) => optional[i])]);
}

/** The `size`-element subsets of `items`, in lexicographic order of their positions (earlier items first). */
function combinations(items: readonly number[], size: number): number[][] {
  if (size === 0) return [[]];
  const out: number[][] = [];
  for (let i = 0; i + size <= items.length; i++) {
    for (const rest of combinations(items.slice(i + 1), size - 1)) out.push([items[i], ...rest]);
  }
  return out;
}

/**
 * A `dc+sd-jwt` Credential Query with one Claims Query per claim (id = the claim name, path = `[name]`),
 * the `claim_sets` of claimSetsFor, and the trust anchors by key identifier when given (§6.1.1.1, HAIP 1.0 §5).
 */
export function sdJwtCredentialQuery(
  id: string,
  vctValues: string[],
  claims: Array<{ name: string; required: boolean }>,
  aki: string[] = [],
): DcqlCredentialQuery {
  const query: DcqlCredentialQuery = {
    id,
    format: SD_JWT_VC_FORMAT,
    meta: { vct_values: [...vctValues] },
    ...(aki.length ? { trusted_authorities: [{ type: 'aki', values: [...aki] }] } : {}),
    claims: claims.map((c) => ({ id: c.name, path: [c.name] })),
  };
  const claimSets = claimSetsFor(
    claims.filter((c) => c.required).map((c) => c.name),
    claims.filter((c) => !c.required).map((c) => c.name),
  );
  if (claimSets) query.claim_sets = claimSets;
  return query;
}

/**
 * One `mso_mdoc` Credential Query (OpenID4VP 1.0 §6.1, §B.2.3): the doctype, one Claims Query per element
 * (`[namespace, element]`, id = the element, `intent_to_retain` false: ISO/IEC 18013-5 §8.3.2.1.2.1), the
 * `claim_sets` of SD-JWT VC queries (claimSetsFor), and the trust anchors by key identifier (§6.1.1.1).
 */
export function mdocCredentialQuery(
  id: string,
  mdoc: { doctype: string; namespace: string },
  claims: Array<{ name: string; required: boolean }>,
  aki: string[] = [],
): DcqlCredentialQuery {
  const query: DcqlCredentialQuery = {
    id,
    format: MDOC_FORMAT,
    meta: { doctype_value: mdoc.doctype },
    ...(aki.length ? { trusted_authorities: [{ type: 'aki', values: [...aki] }] } : {}),
    claims: claims.map((c) => ({ id: c.name, path: [mdoc.namespace, c.name], intent_to_retain: false })),
  };
  const claimSets = claimSetsFor(
    claims.filter((c) => c.required).map((c) => c.name),
    claims.filter((c) => !c.required).map((c) => c.name),
  );
  if (claimSets) query.claim_sets = claimSets;
  return query;
}

/** The Credential Query id of a type asked for as an mdoc (OpenID4VP 1.0 §6.1 ids: letters, digits, `_`, `-`). */
export const mdocQueryId = (typeName: string) => `${typeName}-mdoc`;

/**
 * Whether a type is asked for as an SD-JWT VC: every type this service issues; a type verified only when it
 * names another issuer's vct (an SD-JWT VC of our own vct would come from our issuer alone, which never issues it).
 */
export function asksSdJwt(type: CredentialType, baseUrl: string): boolean {
  return !type.verifyOnly || (type.vct !== undefined && !isOwnVct(type.vct, baseUrl));
}

/**
 * The DCQL query for the requested types, in the order they were asked for; every type is required. A type
 * with `mdoc` is asked for as an SD-JWT VC or as an mdoc (§6.2 `credential_sets`, one required set per
 * type, the SD-JWT VC first), a type verified only in the forms it comes in (asksSdJwt); its mdoc query names
 * the trust anchors that may vouch for the type (`aki`, §6.1.1.1), given per type or for all, and its SD-JWT
 * VC query those of `sdJwtAki` (HAIP 1.0 §5).
 */
export function dcqlQueryFor(
  types: CredentialType[],
  baseUrl: string,
  aki: string[] | ((type: string) => string[]) = [],
  sdJwtAki: (type: string) => string[] = () => [],
): DcqlQuery {
  const credentials: DcqlCredentialQuery[] = [];
  const options: string[][][] = [];
  for (const type of types) {
    const forms: string[][] = [];
    if (asksSdJwt(type, baseUrl)) {
      credentials.push(credentialQueryFor(type, baseUrl, sdJwtAki(type.name)));
      forms.push([type.name]);
    }
    if (type.mdoc) {
      const claims = Object.entries(type.attributes).map(([name, spec]) => ({ name, required: spec.required }));
      credentials.push(
        mdocCredentialQuery(
          mdocQueryId(type.name),
          type.mdoc,
          claims,
          typeof aki === 'function' ? aki(type.name) : aki,
        ),
      );
      forms.push([mdocQueryId(type.name)]);
    }
    options.push(forms);
  }
  if (!types.some((type) => type.mdoc)) return { credentials };
  return { credentials, credential_sets: options.map((o) => ({ options: o, required: true })) };
}

/**
 * The Credential Queries a response answers (§6.2, §8.1): without `credential_sets`, all of them; with
 * them, per set the first option whose every query is answered. Otherwise the options of the first
 * required set none of which is answered.
 */
export function answeredOption(
  query: DcqlQuery,
  answered: ReadonlySet<string>,
): { ids: string[] } | { unanswered: string[][] } {
  if (!query.credential_sets) {
    const missing = query.credentials.map((q) => q.id).filter((id) => !answered.has(id));
    return missing.length ? { unanswered: [missing] } : { ids: query.credentials.map((q) => q.id) };
  }
  const ids: string[] = [];
  for (const set of query.credential_sets) {
    const option = set.options.find((o) => o.every((id) => answered.has(id)));
    if (option) ids.push(...option);
    else if (set.required !== false) return { unanswered: set.options };
  }
  return { ids };
}

/**
 * The claim ids a Credential Query asks for as alternatives (§6.4.1): its `claim_sets`, or all of its
 * `claims` as the one option, or no claim at all when it has no `claims`.
 */
export function claimOptions(query: DcqlCredentialQuery): string[][] {
  if (!query.claims) return [[]];
  if (query.claim_sets) return query.claim_sets;
  return [query.claims.map((claim, i) => claim.id ?? String(i))];
}

/**
 * Which option of a Credential Query the given claims satisfy: the first whose every claim is present.
 * `hasClaim` answers for one Claims Query. `undefined` when none is satisfied.
 */
export function satisfiedOption(
  query: DcqlCredentialQuery,
  hasClaim: (claim: DcqlClaimsQuery) => boolean,
): string[] | undefined {
  const byId = new Map((query.claims ?? []).map((claim, i) => [claim.id ?? String(i), claim]));
  return claimOptions(query).find((option) =>
    option.every((id) => {
      const claim = byId.get(id);
      return claim !== undefined && hasClaim(claim);
    }),
  );
}

/** The claims of the least demanding option that are missing: what a person is told is missing. */
export function missingClaims(query: DcqlCredentialQuery, hasClaim: (claim: DcqlClaimsQuery) => boolean): string[] {
  const byId = new Map((query.claims ?? []).map((claim, i) => [claim.id ?? String(i), claim]));
  const missing = claimOptions(query).map((option) =>
    option.filter((id) => {
      const claim = byId.get(id);
      return claim === undefined || !hasClaim(claim);
    }),
  );
  return missing.reduce((least, m) => (m.length < least.length ? m : least), missing[0] ?? []);
}

/** Reads a top-level claims path pointer (`[name]`), the only kind this service puts in its queries. */
export function topLevelClaimName(claim: DcqlClaimsQuery): string | undefined {
  return claim.path.length === 1 && typeof claim.path[0] === 'string' ? claim.path[0] : undefined;
}
