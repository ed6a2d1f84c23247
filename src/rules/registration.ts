/**
 * What a relying party registered to ask for (ETSI TS 119 475 §5.2.4, `credentials`), and whether a
 * presentation request stays within it (ARF Annex 2 RPRC_21: a wallet refuses, or warns of, a request for
 * more than the registration certificate registers). Pure functions over the certificate's claims and a
 * DCQL query (OpenID4VP 1.0 §6).
 */

/** OpenID4VP 1.0 §7: a claims path pointer; `null` selects every element of an array. */
export type ClaimPath = Array<string | number | null>;

/** One entry of the certificate's `credentials`: a format, the types it names, and the claims registered. */
export interface RegisteredCredential {
  format: string;
  /** dc+sd-jwt: `meta.vct_values` */
  vctValues?: string[];
  /** mso_mdoc: `meta.doctype_value` */
  doctype?: string;
  /** `claim[].path`; empty when the entry names no claims */
  claims: ClaimPath[];
}

/** A Credential Query as far as registration is concerned (OpenID4VP 1.0 §6.1, §6.3). */
export interface AskedCredential {
  id: string;
  format: string;
  meta: { vct_values?: string[]; doctype_value?: string };
  claims?: Array<{ path: ClaimPath }>;
}

const SD_JWT_VC = 'dc+sd-jwt';
const MDOC = 'mso_mdoc';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isPath = (v: unknown): v is ClaimPath =>
  Array.isArray(v) &&
  v.length > 0 &&
  v.every((p) => typeof p === 'string' || p === null || (typeof p === 'number' && Number.isInteger(p) && p >= 0));

/**
 * ETSI TS 119 475 §5.2.4 `credentials`: an array of `{ format, meta, claim: [{ path }] }` (`meta` as DCQL's:
 * `vct_values` for dc+sd-jwt, `doctype_value` for mso_mdoc). Throws an Error naming the member that is wrong.
 */
export function readRegisteredCredentials(value: unknown): RegisteredCredential[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new Error('credentials: must be an array');
  return value.map((entry, i) => {
    const at = `credentials[${i}]`;
    if (!isObject(entry) || typeof entry.format !== 'string' || entry.format === '')
      throw new Error(`${at}: must be an object with a format`);
    const meta = entry.meta;
    if (meta !== undefined && !isObject(meta)) throw new Error(`${at}.meta: must be an object`);
    const out: RegisteredCredential = { format: entry.format, claims: [] };
    if (entry.format === SD_JWT_VC) {
      const vct = meta?.vct_values;
      if (!Array.isArray(vct) || vct.length === 0 || !vct.every((v) => typeof v === 'string'))
        throw new Error(`${at}.meta.vct_values: a dc+sd-jwt entry names its types (a non-empty array of strings)`);
      out.vctValues = vct as string[];
    } else if (entry.format === MDOC) {
      if (typeof meta?.doctype_value !== 'string' || meta.doctype_value === '')
        throw new Error(`${at}.meta.doctype_value: an mso_mdoc entry names its doctype`);
      out.doctype = meta.doctype_value;
    }
    const claim = entry.claim;
    if (claim !== undefined) {
      if (!Array.isArray(claim)) throw new Error(`${at}.claim: must be an array of { path }`);
      claim.forEach((c, j) => {
        if (!isObject(c) || !isPath(c.path))
          throw new Error(`${at}.claim[${j}].path: must be a non-empty claims path pointer (OpenID4VP 1.0 §7)`);
        out.claims.push(c.path);
      });
    }
    return out;
  });
}

/** A registered entry names the asked credential: same format, and the types it asks for among those registered. */
function names(entry: RegisteredCredential, asked: AskedCredential): boolean {
  if (entry.format !== asked.format) return false;
  if (asked.format === SD_JWT_VC) {
    const vct = asked.meta.vct_values ?? [];
    return vct.length > 0 && vct.every((v) => entry.vctValues?.includes(v));
  }
  if (asked.format === MDOC)
    return asked.meta.doctype_value !== undefined && entry.doctype === asked.meta.doctype_value;
  return false;
}

/**
 * A registered path covers an asked one when it is the same claim or a claim that contains it (registering
 * `address` registers `address.locality`); a registered `null` covers any element of that array.
 */
export function pathCovers(registered: ClaimPath, asked: ClaimPath): boolean {
  if (registered.length > asked.length) return false;
  return registered.every(
    (r, i) => r === asked[i] || (r === null && (asked[i] === null || typeof asked[i] === 'number')),
  );
}

/** A claim's name as a person reads it: the element for an mdoc (`[namespace, element]`), the dotted path otherwise. */
export function claimName(format: string, path: ClaimPath): string {
  if (format === MDOC && path.length === 2) return String(path[1]);
  return path.map((p) => (p === null ? '*' : String(p))).join('.');
}

/** What a Credential Query names, for a description: its format and type. */
const described = (asked: AskedCredential) =>
  `${asked.format} ${asked.format === MDOC ? (asked.meta.doctype_value ?? '?') : (asked.meta.vct_values ?? []).join(' or ')}`;

/**
 * What the asked Credential Queries request beyond the registration, one line per query that does: its
 * format and type, and the claims not registered (or that the type is not registered at all). Empty: the
 * request is within the registration. A query without `claims` asks for no selectively disclosable claim
 * (OpenID4VP 1.0 §6.1), so only its type must be registered.
 */
export function beyondRegistration(
  asked: readonly AskedCredential[],
  registered: readonly RegisteredCredential[],
): string[] {
  const out: string[] = [];
  for (const query of asked) {
    const entries = registered.filter((e) => names(e, query));
    const claims = (query.claims ?? []).map((c) => c.path);
    if (entries.length === 0) {
      const list = claims.map((p) => claimName(query.format, p)).join(', ');
      out.push(`${described(query)} is not registered${list ? ` (asked: ${list})` : ''}`);
      continue;
    }
    const registeredPaths = entries.flatMap((e) => e.claims);
    const missing = claims.filter((p) => !registeredPaths.some((r) => pathCovers(r, p)));
    if (missing.length)
      out.push(`${described(query)}: ${missing.map((p) => claimName(query.format, p)).join(', ')} not registered`);
  }
  return out;
}
