import type { JWTVerifyGetKey } from 'jose';
import { attestationStatusEntry } from '../rules/keyAttestation.js';
import { StatusChecks, StatusListUnavailable } from '../verification/statusCheck.js';
import type { AttestationKeys } from './attestationKeys.js';

/**
 * The status of a wallet or key attestation (ARF ISSU_21, ISSU_30; OpenID4VCI 1.0 Appendix D.1, E): one that
 * names a Token Status List entry is refused unless the entry is valid. The list is fetched with the bounded
 * outbound fetch the verifier uses (src/verification/statusCheck.ts: https, no private address unless allowed,
 * 5 s, 1 MiB, cached for its ttl), only after the attestation's own signature was verified, and must be signed
 * by a trusted wallet provider (its JWKS by kid, or an x5c chain to its roots): a wallet provider publishes
 * the lists of its attestations.
 */
export class AttestationStatus {
  constructor(
    private readonly checks: StatusChecks,
    private readonly providers: AttestationKeys,
    /** `statusList.onUnavailable`: a list that cannot be fetched refuses the attestation, or lets it through */
    private readonly onUnavailable: 'refuse' | 'accept' = 'refuse',
  ) {}

  /** Why the attestation is refused (`what` names it in the description), or undefined when its status allows it. */
  async refusal(payload: Record<string, unknown>, what: string): Promise<string | undefined> {
    const entry = attestationStatusEntry(payload);
    if (entry === undefined) return undefined;
    if (entry === 'malformed') return `${what} status.status_list must name an idx and a uri`;
    const keys: JWTVerifyGetKey = (header) => this.providers.keyFor(header as Record<string, unknown>);
    const issuer = typeof payload.iss === 'string' ? payload.iss : 'wallet provider';
    let value: number;
    try {
      value = await this.checks.status(issuer, entry.uri, entry.idx, keys);
    } catch (err) {
      if (err instanceof StatusListUnavailable && this.onUnavailable === 'accept') return undefined;
      // the description names no value the attestation chose (its uri): D4
      return err instanceof StatusListUnavailable
        ? `${what} status cannot be checked: its status list cannot be fetched`
        : `${what} status cannot be checked: its status list is not one to trust`;
    }
    if (value === 0) return undefined;
    return `${what} is ${value === 1 ? 'revoked' : value === 2 ? 'suspended' : 'not valid'} (its status list says so)`;
  }
}
