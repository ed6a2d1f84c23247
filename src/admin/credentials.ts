import type { Logger } from '../log.js';
import {
  RevocationIsFinal,
  UnknownCredential,
  type CredentialStatus,
  type StatusRegistry,
} from '../status/registry.js';

/** The operator's actions on an issued credential, by SerialNumber (D18). */
export const ACTIONS = { revoke: 'revoked', suspend: 'suspended', reinstate: 'valid' } as const satisfies Record<
  string,
  CredentialStatus
>;
export type Action = keyof typeof ACTIONS;

export type ActionOutcome =
  { kind: 'done'; status: CredentialStatus; changed: boolean } | { kind: 'unknown' } | { kind: 'final' };

/**
 * One status change, and its audit line: SerialNumber, the new status, when, and through what (`api` or
 * `cli`, or the demo's operator forms); never anything the credential says (D17).
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
    const { changed } = await registry.change(serialNumber, status);
    logger.info(
      { audit: 'credential_status', serialNumber, status, changed, via, at: new Date().toISOString() },
      `credential ${status}`,
    );
    return { kind: 'done', status, changed };
  } catch (err) {
    if (err instanceof UnknownCredential) return { kind: 'unknown' };
    if (err instanceof RevocationIsFinal) return { kind: 'final' };
    throw err;
  }
}
