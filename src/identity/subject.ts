import { createHmac, createSecretKey, hkdfSync, type KeyObject } from 'node:crypto';

/**
 * Pairwise subject identifiers (OpenID Connect Core §8.1): one person gets a different, stable `sub` at
 * each client, so that two clients cannot link their users by `sub`. The sector is the client (its
 * client_id), the local identifier is what identifies the person to this service, and the salt is the
 * deployment's pairwise secret (keys.pairwise, shared by every instance and never rotated: a new secret
 * would give every person a new `sub`).
 */
export class PairwiseSubjects {
  readonly #key: KeyObject;

  constructor(secret: string) {
    this.#key = createSecretKey(
      Buffer.from(hkdfSync('sha256', secret, 'pairwise', 'VC provider pairwise subject', 32)),
    );
  }

  /** `local`: the parts that identify the person (e.g. an issuer and its identifier), unambiguously joined. */
  of(clientId: string, local: readonly string[]): string {
    return createHmac('sha256', this.#key)
      .update(JSON.stringify([clientId, ...local]))
      .digest('base64url');
  }
}
