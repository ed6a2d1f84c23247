/** ISO 8601 duration (the config's `validity`, e.g. P365D, PT12H) added to a date, in UTC. */
export function credentialExpiry(validity: string, from: Date): Date {
  const m = /^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/.exec(validity);
  if (!m) throw new Error(`invalid ISO 8601 duration ${validity}`);
  const [y, mo, w, d, h, mi, s] = m.slice(1).map((v) => Number(v ?? 0));
  const out = new Date(from.getTime());
  out.setUTCFullYear(out.getUTCFullYear() + y, out.getUTCMonth() + mo, out.getUTCDate() + w * 7 + d);
  out.setUTCHours(out.getUTCHours() + h, out.getUTCMinutes() + mi, out.getUTCSeconds() + s);
  out.setUTCMilliseconds(0);
  return out;
}
