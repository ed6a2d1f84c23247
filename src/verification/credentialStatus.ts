import type { JWTVerifyGetKey } from 'jose';
import type { CredentialStatus } from '../status/registry.js';
import type { OutboundFetch } from '../http/outboundFetch.js';
import { isObject } from './disclosures.js';
import { refuse } from './errors.js';
import { IssuerKeysUnavailable } from './issuerKeys.js';
import { StatusChecks, StatusListInvalid, StatusListUnavailable } from './statusCheck.js';

/** How a presented credential's status is looked up (D18). */
export interface StatusCheckOptions {
  /** for status lists, when no `statusChecks` is given: the outbound rules (src/http/outboundFetch.ts) */
  outbound?: OutboundFetch;
  /** D18: the status lists of presented credentials (cached across presentations) */
  statusChecks?: StatusChecks;
  /** D18 `statusList.onUnavailable`: a credential whose status list cannot be fetched is refused (default) or accepted */
  onStatusUnavailable?: 'refuse' | 'accept';
  /** D18: the status of an mdoc this service issued, by its MSO's digest; undefined for any other mdoc */
  ownMdocStatus?: (msoDigest: string) => Promise<CredentialStatus | undefined>;
}

/**
 * D18: a `status.status_list` reference (draft-ietf-oauth-status-list §6.2) is looked up; other status
 * mechanisms are not known here and are left alone. Revoked (1) and suspended (2) are refused by name, any
 * other value but valid (0) as an invalid status. A list that cannot be fetched is refused or accepted as
 * `onStatusUnavailable` says; a list that is not to be trusted is always refused.
 */
export async function checkStatus(
  status: unknown,
  issuer: string,
  issuerKey: JWTVerifyGetKey,
  ctx: StatusCheckOptions,
): Promise<void> {
  if (status === undefined) return;
  if (!isObject(status)) throw refuse('malformed_presentation', 'the credential status is not an object');
  const reference = status.status_list;
  if (reference === undefined) return;
  if (
    !isObject(reference) ||
    typeof reference.uri !== 'string' ||
    typeof reference.idx !== 'number' ||
    !Number.isSafeInteger(reference.idx) ||
    reference.idx < 0
  ) {
    throw refuse(
      'malformed_presentation',
      'the credential status.status_list needs a uri and a non-negative integer idx',
    );
  }
  let value: number;
  try {
    value = await (ctx.statusChecks ?? new StatusChecks(ctx.outbound)).status(
      issuer,
      reference.uri,
      reference.idx,
      issuerKey,
    );
  } catch (err) {
    if (err instanceof StatusListUnavailable || err instanceof IssuerKeysUnavailable) {
      if (ctx.onStatusUnavailable === 'accept') return;
      throw refuse('credential_status_unavailable', `credential status unavailable: ${err.message}`);
    }
    if (err instanceof StatusListInvalid)
      throw refuse('credential_status_invalid', `credential status invalid: ${err.message}`);
    throw err;
  }
  if (value === 1) throw refuse('credential_revoked', 'credential revoked');
  if (value === 2) throw refuse('credential_suspended', 'credential suspended');
  if (value !== 0)
    throw refuse('credential_status_invalid', `credential status invalid: the status list gives it the value ${value}`);
}

/**
 * D18 for the mdocs this service issued: an mdoc carries no status (no library writes one into the MSO), but
 * the issuer recorded each under its MSO's digest with its SerialNumber's entry, so a revocation or
 * suspension by SerialNumber reaches this verifier at once, refused as a listed status would be. Other
 * verifiers cannot know of it (src/admin says so to the operator). Another issuer's mdoc is not found.
 */
export async function checkOwnMdocStatus(msoDigest: string, ctx: StatusCheckOptions): Promise<void> {
  const status = await ctx.ownMdocStatus?.(msoDigest);
  if (status === 'revoked') throw refuse('credential_revoked', 'credential revoked');
  if (status === 'suspended') throw refuse('credential_suspended', 'credential suspended');
}
