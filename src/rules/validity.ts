const DURATION = /^P(?!$)(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?=\d)(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/;

/**
 * ISO 8601 duration (the config's `validity`, e.g. P365D, PT12H) added to a date, in UTC. Years and
 * months keep the day within the target month (31 January + P1M = 28 or 29 February), as ISO 8601
 * date arithmetic does; then weeks, days and the time part are added.
 */
export function credentialExpiry(validity: string, from: Date): Date {
  const m = DURATION.exec(validity);
  if (!m) throw new Error(`invalid ISO 8601 duration ${validity}`);
  const [y, mo, w, d, h, mi, s] = m.slice(1).map((v) => Number(v ?? 0));
  const months = from.getUTCFullYear() * 12 + from.getUTCMonth() + y * 12 + mo;
  const year = Math.floor(months / 12);
  const month = months % 12;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  const out = new Date(from.getTime());
  out.setUTCFullYear(year, month, Math.min(from.getUTCDate(), lastDay));
  out.setUTCDate(out.getUTCDate() + w * 7 + d);
  out.setUTCHours(out.getUTCHours() + h, out.getUTCMinutes() + mi, out.getUTCSeconds() + s, 0);
  return out;
}

/**
 * How long an mdoc is valid at most while it carries no status (ISO/IEC 18013-5 second edition's `status`
 * in the MSO is written by no library we use): ARF Annex 2 VCR_01 lets an attestation valid for 24 hours or
 * less go without revocation. A type's `mdoc.irrevocableValidity` changes it, as the operator's choice.
 */
export const MDOC_IRREVOCABLE_VALIDITY = 'PT24H';
export const SHORT_LIVED_MS = 86_400_000;

/** An mdoc's MSO validUntil: the credential's expiry, or `irrevocableValidity` after `issuedAt` when that is sooner. */
export function mdocValidUntil(
  irrevocableValidity: string | undefined,
  issuedAt: Date,
  credentialExpiresAt: Date,
): Date {
  const cap = credentialExpiry(irrevocableValidity ?? MDOC_IRREVOCABLE_VALIDITY, issuedAt);
  return cap.getTime() < credentialExpiresAt.getTime() ? cap : credentialExpiresAt;
}

/**
 * The types whose mdocs, issued at `now`, are valid longer than a day (the operator chose a longer
 * `mdoc.irrevocableValidity`, and the type's validity is longer too): a revocation cannot reach them for that long.
 */
export function longLivedMdocTypes(
  types: readonly { name: string; validity: string; mdoc?: { irrevocableValidity?: string } }[],
  now = new Date(),
): { name: string; validity: string }[] {
  return types.flatMap((t) => {
    const chosen = t.mdoc?.irrevocableValidity;
    if (chosen === undefined) return [];
    const own = credentialExpiry(t.validity, now);
    const until = mdocValidUntil(chosen, now, own);
    if (until.getTime() - now.getTime() <= SHORT_LIVED_MS) return [];
    return [{ name: t.name, validity: own.getTime() <= until.getTime() ? t.validity : chosen }];
  });
}
