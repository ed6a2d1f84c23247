import type { Logger } from '../log.js';
import {
  RevocationIsFinal,
  UnknownCredential,
  type CredentialFormat,
  type CredentialStatus,
  type StatusRegistry,
} from '../status/registry.js';

/** The operator's actions on an issued credential, by SerialNumber (D18). */
export const ACTIONS = { revoke: 'revoked', suspend: 'suspended', reinstate: 'valid' } as const satisfies Record<
  string,
  CredentialStatus
>;
export type Action = keyof typeof ACTIONS;

export interface ChangeDone {
  kind: 'done';
  status: CredentialStatus;
  changed: boolean;
  format: CredentialFormat;
  /** epoch seconds: when the credential expires */
  exp: number;
}
export type ActionOutcome = ChangeDone | { kind: 'unknown' } | { kind: 'final' };

/**
 * One status change of every credential the SerialNumber names, and its audit line: SerialNumber, the new status, the credential's format, when, and
 * through what (`api` or `cli`, or the demo's operator forms); never anything the credential says (D17).
 */
export async function changeStatus(
  registry: StatusRegistry,
  logger: Logger,
  serialNumber: string,
  action: Action,
  via: 'api' | 'cli' | 'demo',
): Promise<ActionOutcome> {
  const status = ACTIONS[action];
  try {
    const { changed, format, exp, credentials } = await registry.change(serialNumber, status);
    logger.info(
      // credentials: how many the SerialNumber names (a batch, and the batches re-issued under it)
      {
        audit: 'credential_status',
        serialNumber,
        status,
        changed,
        format,
        credentials,
        via,
        at: new Date().toISOString(),
      },
      `credential ${status}`,
    );
    return { kind: 'done', status, changed, format, exp };
  } catch (err) {
    if (err instanceof UnknownCredential) return { kind: 'unknown' };
    if (err instanceof RevocationIsFinal) return { kind: 'final' };
    throw err;
  }
}

/** An instant as the ID token's ExpiresAt writes it (ISO 8601, UTC, whole seconds). */
export const isoSeconds = (epochSeconds: number) =>
  new Date(epochSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * A revocation or suspension that reaches this service's verifier only: the credential is an mdoc, which
 * carries no status (src/status/registry.ts), so every other verifier accepts it until it expires. A
 * reinstatement is true for every verifier, and is not one.
 */
export const reachesOurVerifierOnly = (outcome: ChangeDone): boolean =>
  outcome.format === 'mso_mdoc' && outcome.status !== 'valid';

/** What the API (409) and the command (exit code 3) tell the operator of such a change. */
export const withoutStatusDescription = (serialNumber: string, outcome: ChangeDone) =>
  `SerialNumber: credential ${serialNumber} was issued as an mdoc without status, valid until ${isoSeconds(outcome.exp)}: it is ${outcome.status} for this service's verifier only, and other verifiers accept it until then`;
