/**
 * Helpers for error descriptions (D4): name a parameter, attribute or scope value in a description
 * without letting a client-controlled string grow the description unboundedly or inject control
 * characters into logs. Only names and non-secret values (scope values, parameter names, methods) may
 * be passed here; never secrets, PINs or attribute values (D17).
 */
export function shown(value: string, max = 64): string {
  const cut = value.length > max ? `${value.slice(0, max)}…` : value;
  return JSON.stringify(cut);
}

/** True when a request value should be treated as absent (RFC 6749 3.1: empty means omitted). */
export function isAbsent(v: unknown): v is undefined | null | '' {
  return v === undefined || v === null || v === '';
}
