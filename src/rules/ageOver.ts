/**
 * ISO/IEC 18013-5 §7.2.5, age attestation: an mdoc asked for `age_over_NN` that it does not hold answers with
 * the nearest one it holds: the smallest `age_over_MM` above NN that is true, else the largest below NN that is
 * false. Either answers the question asked (over 21 is over 18; not over 16 is not over 18), so the verifier
 * reads it as `age_over_NN`.
 */
const AGE_OVER = /^age_over_(\d{2})$/;

/** The answer to `age_over_NN` from the disclosed elements: its own element, else the nearest that decides it. */
export function ageOverAnswer(requested: string, disclosed: Readonly<Record<string, unknown>>): boolean | undefined {
  const asked = AGE_OVER.exec(requested);
  if (!asked) return undefined;
  const own = disclosed[requested];
  if (Object.hasOwn(disclosed, requested)) return typeof own === 'boolean' ? own : undefined;
  const nn = Number(asked[1]);
  const held = Object.entries(disclosed).flatMap(([name, value]) => {
    const m = AGE_OVER.exec(name);
    return m && typeof value === 'boolean' ? [{ mm: Number(m[1]), value }] : [];
  });
  const over = held.some((h) => h.mm > nn && h.value);
  const under = held.some((h) => h.mm < nn && !h.value);
  // both would be an issuer contradicting itself: no answer
  return over === under ? undefined : over;
}

/**
 * The disclosed elements with each requested `age_over_NN` the mdoc answered through a nearer one (§7.2.5)
 * added under its own name; everything else as disclosed.
 */
export function withAgeAnswers(
  disclosed: Readonly<Record<string, unknown>>,
  requested: readonly string[],
): Record<string, unknown> {
  const claims: Record<string, unknown> = { ...disclosed };
  for (const name of requested) {
    if (Object.hasOwn(claims, name)) continue;
    const answer = ageOverAnswer(name, disclosed);
    if (answer !== undefined) claims[name] = answer;
  }
  return claims;
}
