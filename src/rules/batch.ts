/**
 * One-time-use credentials (OpenID4VCI 1.0 §8.2 `proofs`, §12.2.4 `batch_credential_issuance`; ARF Annex 2
 * ISSU_35 to ISSU_47): how many credentials one request may buy, which keys they are bound to, and the
 * timestamps they carry. Pure functions; the credential endpoint (src/issuance/issueCredential.ts) applies them.
 */

/** The largest batch an operator may configure: each credential is a signature and a status entry in one request. */
export const MAX_BATCH_SIZE = 100;

/** A type's batch size: its own `batchSize`, else the operator's default (`issuance.batchSize`); 1 is no batch. */
export function batchSizeOf(type: { batchSize?: number }, defaultSize: number): number {
  return type.batchSize ?? defaultSize;
}

/**
 * The issuer's `batch_credential_issuance.batch_size` (§12.2.4: the largest `proofs` array it takes, at least 2),
 * the largest of its types' batch sizes; undefined when no type takes batches (then the member is left out).
 * A type's own limit is published in its configuration's `credential_reuse_policy` and enforced per request.
 */
export function issuerBatchSize(sizes: readonly number[]): number | undefined {
  const largest = Math.max(1, ...sizes);
  return largest >= 2 ? largest : undefined;
}

/**
 * ETSI TS 119 472-3 §4.2.4.2 `credential_reuse_policy` (ARF ISSU_39, ISSU_40, ISSU_45): a batch type is Method A
 * (once-only), telling the wallet the batch size and the number of unused credentials at which it asks for a new
 * batch (a fifth of the batch, at least one, always below the batch size). A type issued one credential at a time
 * publishes none: without the member a wallet may present its one credential again, which is what it holds.
 */
export function reusePolicyOf(batchSize: number):
  | {
      id: 'arf_annex_ii';
      options: { details: ['once_only']; batch_size: number; reissue_trigger_unused: number }[];
    }
  | undefined {
  if (batchSize < 2) return undefined;
  return {
    id: 'arf_annex_ii',
    options: [
      {
        details: ['once_only'],
        batch_size: batchSize,
        reissue_trigger_unused: Math.min(batchSize - 1, Math.max(1, Math.floor(batchSize / 5))),
      },
    ],
  };
}

/** The step timestamps of batch credentials are rounded to (ISSU_36): a whole UTC hour. */
export const BATCH_TIME_STEP = 3600;

/** The start of the UTC hour an instant (epoch seconds) falls in. */
export const wholeHour = (epochSeconds: number) => Math.floor(epochSeconds / BATCH_TIME_STEP) * BATCH_TIME_STEP;

/**
 * ARF ISSU_36: the timestamps of credentials issued in a batch must not tell relying parties that they belong
 * together. Every credential of a batch type carries its issuance time and its expiry rounded down to the whole
 * UTC hour: every credential of the type issued in that hour (each batch, every wallet) carries the same `iat`,
 * and every one whose flow began in the same hour the same `exp` (herd privacy), where a second-exact time would
 * be shared by one batch alone. Rounded down, so a credential never outlives what the flow allowed; the type's
 * validity is at least two hours (config check), so the rounded expiry is always ahead.
 */
export function batchTimestamps(now: number, expiresAt: number): { iat: number; exp: number } {
  return { iat: wholeHour(now), exp: wholeHour(expiresAt) };
}

/** The shortest validity a batch type may have (config check): its rounded expiry is still an hour ahead. */
export const MIN_BATCH_VALIDITY_SECONDS = 2 * BATCH_TIME_STEP;

/** Where two proofs of one request name the same key: the later one's position, and the first one's. */
export function duplicateKey(thumbprints: readonly string[]): { at: number; first: number } | undefined {
  const seen = new Map<string, number>();
  for (const [at, thumbprint] of thumbprints.entries()) {
    const first = seen.get(thumbprint);
    if (first !== undefined) return { at, first };
    seen.set(thumbprint, at);
  }
  return undefined;
}

/** What a re-issuance is refused for, when it is: the credential expired, or its SerialNumber is revoked or suspended. */
export function reissueRefusal(
  credentialExpiresAt: number,
  status: 'valid' | 'revoked' | 'suspended' | undefined,
  now = Math.floor(Date.now() / 1000),
): string | undefined {
  if (credentialExpiresAt <= now)
    return "refresh_token: the credential's validity has ended; a new one needs a new offer";
  if (status === undefined) return 'refresh_token: the credential is no longer known to this issuer';
  if (status === 'revoked') return 'refresh_token: the credential has been revoked';
  if (status === 'suspended') return 'refresh_token: the credential is suspended; ask again once it is reinstated';
  return undefined;
}
