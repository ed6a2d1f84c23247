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
