import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/load.js';
import { SECRETS } from './secrets.js';

/**
 * Issue 21, D17: what must never appear in a log line. Used by the log-secret journey
 * (test/e2e/log-secrets.test.ts, with the values it made along the way) and by the check of the whole
 * run's log (test/logCapture.ts, with the values known before the run).
 */
export interface Needle {
  what: string;
  value: string;
  /** short values (PINs): only as a run of their own, not inside a longer identifier or number */
  isolated?: boolean;
}

/** The values the log-secret journey sends: distinctive, so that a match is never a coincidence. */
export const JOURNEY = {
  pins: { issuance: '7316', external: '5093' },
  badge: {
    FirstName: 'Zenobia',
    LastName: 'Quarrington-Vell',
    Email: 'zenobia.quarrington@example.net',
    Company: 'Umbrage Cartography Ltd',
  },
  pid: {
    given_name: 'Ottoline',
    family_name: 'Brackwater',
    birthdate: '1961-04-17',
    nationalities: 'IE',
    personal_administrative_number: 'PAN-88219-ZXQ',
  },
  idvPerson: { given_name: 'Leopoldine', family_name: 'Strathmere', birthdate: '1958-11-02' },
};

export const DEMO_CONFIG = fileURLToPath(new URL('../../config/demo.yaml', import.meta.url));

/**
 * config/demo.yaml's secrets as `npm start` reads them (no environment overrides), the test config's
 * client secrets, and what the journey sends (PINs, attribute values, the PID's and the identity
 * provider's person).
 */
export async function knownNeedles(): Promise<Needle[]> {
  const { config } = await loadConfig(DEMO_CONFIG, { BASE_URL: 'http://127.0.0.1:1' });
  const needles: Needle[] = [];
  for (const c of config.clients) {
    if (c.clientSecret) needles.push({ what: `demo client secret of ${c.clientId}`, value: c.clientSecret });
    for (const secret of c.webhook ? (c.webhook.secrets ?? [c.webhook.secret!]) : []) {
      needles.push({ what: `demo webhook secret of ${c.clientId}`, value: secret });
      needles.push({ what: `demo webhook secret of ${c.clientId} (its key)`, value: secret.replace(/^whsec_/, '') });
    }
  }
  const idv = config.identity.VerifiedIdentity_Other;
  if (idv?.clientSecret) needles.push({ what: 'demo identity provider client secret', value: idv.clientSecret });
  if (config.admin.token) needles.push({ what: 'demo admin token', value: config.admin.token });
  for (const [name, secret] of Object.entries(SECRETS))
    needles.push({ what: `test client secret ${name}`, value: secret });
  for (const [name, pin] of Object.entries(JOURNEY.pins))
    needles.push({ what: `PIN (${name})`, value: pin, isolated: true });
  for (const [group, values] of [
    ['attribute', JOURNEY.badge],
    ['PID claim', JOURNEY.pid],
    ['identity provider claim', JOURNEY.idvPerson],
  ] as const) {
    for (const [name, value] of Object.entries(values))
      if (value.length >= 6) needles.push({ what: `${group} ${name}`, value });
  }
  return needles;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A function that names each needle found in a line, with the (shortened) line. */
export function leakFinder(needles: readonly Needle[]): (line: string) => string[] {
  const tests = needles
    .filter((n) => n.value.length > 0)
    .map((n) => {
      const isolated = n.isolated ? new RegExp(`(^|[^0-9A-Za-z_-])${escape(n.value)}([^0-9A-Za-z_-]|$)`) : undefined;
      return { what: n.what, found: (l: string) => (isolated ? isolated.test(l) : l.includes(n.value)) };
    });
  return (line) =>
    tests.filter((t) => t.found(line)).map((t) => `${t.what}: ${line.length > 400 ? `${line.slice(0, 400)}…` : line}`);
}

/** Each needle found in `lines`, with the line it is in. */
export function leaks(lines: Iterable<string>, needles: readonly Needle[]): string[] {
  const find = leakFinder(needles);
  const out: string[] = [];
  for (const line of lines) out.push(...find(line));
  return out;
}
