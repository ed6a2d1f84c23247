import { calculateJwkThumbprint, type JWK } from 'jose';
import { RESERVED_CLAIM_NAMES } from '../rules/claimNames.js';
import { checkStatus, type StatusCheckOptions } from './credentialStatus.js';
import { checkDisclosures, HASHES } from './disclosures.js';
import { refuse } from './errors.js';
import type { IssuerKeys } from './issuerKeys.js';
import { checkValidity, checkVct, decodeIssuerJwt, verifyIssuer } from './sdJwtIssuer.js';
import { checkKeyBindingJwt, holderKeyOf, verifySdJwt } from './sdJwtKeyBinding.js';

export { checkDisclosures } from './disclosures.js';
export { ISSUER_ALGS } from './sdJwtIssuer.js';
export { KB_ALGS, KB_MAX_AGE } from './sdJwtKeyBinding.js';

export interface PresentationExpectations {
  /** the verifier's client identifier: the KB-JWT `aud` must equal it */
  clientId: string;
  /** the request's nonce: the KB-JWT `nonce` must equal it */
  nonce: string;
  /** the requested type's vct, or the accepted ones (the Credential Query's `meta.vct_values`) */
  vct: string | readonly string[];
}

/** `outbound`, `statusChecks`, `onStatusUnavailable`: how the credential's status is looked up (credentialStatus.ts). */
export interface PresentationContext extends StatusCheckOptions {
  issuerKeys: IssuerKeys;
  /** seconds of clock skew accepted on exp, nbf, iat (default 30) */
  clockTolerance?: number;
  /** epoch seconds; defaults to now */
  now?: number;
  /**
   * DER roots that may vouch for this query's credential type (src/keys/trustAnchors.ts): a credential of an
   * issuer not otherwise trusted is accepted when its `x5c` chains to one (SD-JWT VC §3.5)
   */
  trustAnchors?: Uint8Array[];
}

export interface VerifiedPresentation {
  issuer: string;
  vct: string;
  /** every claim of the credential as presented (plain and disclosed), except the registered ones */
  claims: Record<string, unknown>;
  /** names of the top-level claims the holder disclosed */
  disclosed: string[];
  holderJwk: JWK;
  /** RFC 7638 thumbprint of `cnf.jwk` */
  holderKeyThumbprint: string;
}

/**
 * Verifies one SD-JWT VC presentation with key binding (OpenID4VP 1.0 §B.3.6, RFC 9901 §7, SD-JWT VC §3.5)
 * for one Credential Query of one request. Each check names its rule and, when it fails, its reason.
 *
 * The issuer signature is verified first (sdJwtIssuer.ts), with jose and the issuer's keys (IssuerKeys): the library
 * verifies against whatever key it is given, so trust in the issuer is ours, as is the `vct`.
 * @sd-jwt/sd-jwt-vc 0.19's `verify()` then does the key binding signature, `nonce`, `sd_hash` and the
 * credential's time claims (sdJwtKeyBinding.ts), but leaves gaps that are closed before it runs:
 *  - it accepts a presentation without a KB-JWT unless a nonce is passed (we always require one);
 *  - it checks that the KB-JWT has an `aud`, not that it is ours;
 *  - it does not check how old the KB-JWT's `iat` is;
 *  - it ignores a disclosure whose digest the credential does not contain (a tampered disclosure, or one
 *    taken from another credential, silently disappears instead of failing);
 *  - it lets a disclosure overwrite a claim of the same name.
 */
export async function verifyPresentation(
  presentation: string,
  expected: PresentationExpectations,
  ctx: PresentationContext,
): Promise<VerifiedPresentation> {
  const tolerance = ctx.clockTolerance ?? 30;
  const now = ctx.now ?? Math.floor(Date.now() / 1000);
  const { issuerJwt, disclosures, kbJwt, sdJwtWithoutKb } = splitPresentation(presentation);
  const decoded = decodeIssuerJwt(issuerJwt);
  const { payload } = decoded;
  const { issuer, issuerKey } = await verifyIssuer(decoded, ctx, now);
  const vct = checkVct(payload, expected.vct);
  checkValidity(payload, now, tolerance);
  const holderJwk = holderKeyOf(payload);
  // RFC 9901 §7.1 step 3-4: every disclosure's digest must occur exactly once in the credential
  const sdAlg = payload._sd_alg ?? 'sha-256';
  if (typeof sdAlg !== 'string' || !HASHES[sdAlg])
    throw refuse(
      'unsupported_credential',
      `the credential's _sd_alg is not supported; supported: ${Object.keys(HASHES).join(', ')}`,
    );
  const disclosed = checkDisclosures(payload, disclosures, sdAlg);
  const kbAlg = checkKeyBindingJwt(kbJwt, {
    clientId: expected.clientId,
    nonce: expected.nonce,
    sdJwtWithoutKb,
    sdAlg,
    now,
    tolerance,
  });
  const verifiedPayload = await verifySdJwt(
    presentation,
    { issuerJwt, holderJwk, kbAlg },
    { nonce: expected.nonce, now, tolerance },
  );
  // D18, draft-ietf-oauth-status-list §8: last, once everything local holds, the credential's status when it
  // references a status list. Checked here rather than by @sd-jwt/sd-jwt-vc, which has no cache, no size or
  // redirect limits and does not check the list's `sub`.
  await checkStatus(payload.status, issuer, issuerKey, ctx);

  const claims = Object.fromEntries(
    Object.entries(verifiedPayload).filter(([name]) => !RESERVED_CLAIM_NAMES.has(name)),
  );
  return {
    issuer,
    vct,
    claims,
    disclosed,
    holderJwk,
    holderKeyThumbprint: await calculateJwkThumbprint(holderJwk),
  };
}

/** RFC 9901 §4: `<issuer-jwt>~<disclosure>~...~<kb-jwt>`. */
function splitPresentation(presentation: string): {
  issuerJwt: string;
  disclosures: string[];
  kbJwt: string;
  sdJwtWithoutKb: string;
} {
  const parts = presentation.split('~');
  if (parts.length < 2) throw refuse('malformed_presentation', 'the presentation is not an SD-JWT (no ~ separator)');
  const kbJwt = parts[parts.length - 1];
  // RFC 9901 §4.3, OpenID4VP 1.0 §6.1 require_cryptographic_holder_binding defaults to true: a
  // presentation ending in `~` has no key binding JWT. The library would accept it when no nonce is passed.
  if (!kbJwt) throw refuse('key_binding_missing', 'the presentation has no key binding JWT');
  const disclosures = parts.slice(1, -1);
  if (disclosures.some((d) => d === ''))
    throw refuse('malformed_presentation', 'the presentation has an empty disclosure');
  return {
    issuerJwt: parts[0],
    disclosures,
    kbJwt,
    sdJwtWithoutKb: presentation.slice(0, presentation.length - kbJwt.length),
  };
}
