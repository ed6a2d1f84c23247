/** /demo/pid, the demo PID issuer's page: GET the form of the PID's claims, POST its offer (link, QR code, dev wallet command). */
import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import type { WalletIssuer } from '../../issuance/walletIssuer.js';
import { credentialExpiry } from '../../rules/validity.js';
import { readForm } from '../../http/form.js';
import { ProtocolError } from '../../rules/errors.js';
import { isPastCalendarDate } from '../../rules/template.js';
import { html } from '../../interaction/views/html.js';
import { qrSvg } from '../../interaction/views/qrSvg.js';
import { page } from '../page.js';
import { DEMO_PID_TYPE, DEMO_PID_VCT } from '../pidType.js';
import { PID_MDOC_DOCTYPE } from '../../rules/pidMdoc.js';

/** What the page uses. */
export interface PidPageDeps {
  baseUrl: string;
  walletIssuer: Pick<WalletIssuer, 'credentialIssuer' | 'createOffer'>;
  /** the PID is also offered as an mdoc file (POST /demo/pid/mdoc), under the demo's test IACA */
  mdoc?: boolean;
}

/** The form's prefilled values. The number is fixed so that each new demo PID is the same person (the same pairwise `sub`). */
const SAMPLE = {
  given_name: 'Ada',
  family_name: 'Lovelace',
  birthdate: '1815-12-10',
  nationalities: 'GB',
  personal_administrative_number: '4718 2093 5561',
};
type Fields = typeof SAMPLE;

const FORM_LIMIT = 16 * 1024;
const COUNTRY = /^[A-Z]{2}$/;

export function pidForm(ctx: Context, d: PidPageDeps, values: Fields = SAMPLE, error?: string): void {
  const field = (name: keyof Fields, label: string, extra = html``) =>
    html`<label>${label}<input name="${name}" value="${values[name]}" required${extra}></label>`;
  page(
    ctx,
    'Demo PID issuer',
    html`<section class="card demo"><h1>Get a demo PID</h1>
<p class="hint">A person-identification credential (SD-JWT VC, vct <code>${DEMO_PID_VCT}</code>) from this demo's own issuer <code>${d.walletIssuer.credentialIssuer}</code>, for trying <strong>VerifiedIdentity</strong> with the dev wallet. Demo only: anyone can get one with any name.</p>
${error && html`<p class="status" role="alert">${error}</p>`}
<form method="post" action="${`${d.baseUrl}/demo/pid`}">
${field('given_name', 'Given name', html` maxlength="100"`)}
${field('family_name', 'Family name', html` maxlength="100"`)}
${field('birthdate', 'Birth date', html` type="date"`)}
${field('nationalities', 'Nationalities (ISO 3166-1 alpha-2 codes, comma-separated)', html` maxlength="60"`)}
${field('personal_administrative_number', 'Personal administrative number', html` maxlength="64"`)}
<button type="submit">Create the offer</button>${d.mdoc && html` <button type="submit" formaction="${`${d.baseUrl}/demo/pid/mdoc`}">Download as an mdoc</button>`}</form>
${d.mdoc && html`<p class="hint">“Download as an mdoc” gives the same PID as an ISO mdoc (doctype <code>${PID_MDOC_DOCTYPE}</code>, the PID Rulebook's element names: <code>birth_date</code>, <code>nationality</code>) under the demo's test IACA, with its device key, in <code>demo-pid-mdoc.json</code>: <code>npm run wallet -- import-mdoc demo-pid-mdoc.json</code>. VerifiedIdentity takes either form.</p>`}
<p><a href="${`${d.baseUrl}/demo`}">Back to the demo</a></p></section>`,
  );
}

export async function pidOffer(ctx: Context, d: PidPageDeps): Promise<void> {
  let values: Record<string, string>;
  try {
    values = await readForm(ctx, FORM_LIMIT);
  } catch (err) {
    if (!(err instanceof ProtocolError)) throw err;
    ctx.status = err.status;
    return pidForm(ctx, d, SAMPLE, `The form could not be read: ${err.message}`);
  }
  const checked = checkPid(values);
  if ('error' in checked) {
    ctx.status = 400;
    return pidForm(ctx, d, checked.fields, checked.error);
  }
  const type = DEMO_PID_TYPE;
  const created = await d.walletIssuer.createOffer({
    stepId: `demo-pid.${randomUUID()}`,
    credentialType: type.name,
    attributes: checked.claims,
    serialNumber: randomUUID(),
    credentialExpiresAt: credentialExpiry(type.validity, new Date()),
  });
  const link = created.offerUri;
  // an <img> of the SVG: the demo's CSP allows data: images, and its width needs no style attribute
  const qr = `data:image/svg+xml;base64,${Buffer.from(qrSvg(link)).toString('base64')}`;
  const command = `npm run wallet -- receive '${link}'`;
  page(
    ctx,
    'Your demo PID offer',
    html`<section class="card demo"><h1>Your demo PID offer</h1>
<p>For ${checked.claims.given_name} ${checked.claims.family_name}, born ${checked.claims.birthdate}. Receive it with your wallet app (scan, or open the link on this device), or with the dev wallet:</p>
<pre>${command}</pre>
<p><img src="${qr}" width="220" height="220" alt="QR code of the credential offer"></p>
<p><a href="${link}">Open in wallet</a></p>
<p class="hint">The offer can be redeemed once, until ${new Date(created.expiresAt * 1000).toISOString()}. Then choose <strong>VerifiedIdentity</strong> under “Verify identity” on the demo page, and present it with <code>npm run wallet -- present '&lt;request link&gt;' --trust keys/verifier-ca.pem</code>.</p>
<p><a href="${`${d.baseUrl}/demo`}">Back to the demo</a> · <a href="${`${d.baseUrl}/demo/pid`}">Another PID</a></p></section>`,
  );
}

/** The PID's claims as the SD-JWT VC names them. */
export type PidClaims = {
  given_name: string;
  family_name: string;
  birthdate: string;
  nationalities: string[];
  personal_administrative_number: string;
};

/** The form's PID (its fields trimmed), or what is wrong with it with the fields to show again. */
export function checkPid(values: Record<string, string>): { claims: PidClaims } | { error: string; fields: Fields } {
  const fields: Fields = {
    given_name: (values.given_name ?? '').trim(),
    family_name: (values.family_name ?? '').trim(),
    birthdate: (values.birthdate ?? '').trim(),
    nationalities: (values.nationalities ?? '').trim(),
    personal_administrative_number: (values.personal_administrative_number ?? '').trim(),
  };
  const checked = check(fields);
  return typeof checked === 'string' ? { error: checked, fields } : { claims: checked };
}

/** The PID's claims from the form, or what is wrong with it (said to the person filling it in). */
function check(f: Fields): PidClaims | string {
  if (!f.given_name || f.given_name.length > 100) return 'Enter a given name (at most 100 characters).';
  if (!f.family_name || f.family_name.length > 100) return 'Enter a family name (at most 100 characters).';
  if (!isPastCalendarDate(f.birthdate)) return 'Enter the birth date as YYYY-MM-DD, a day in the past.';
  const nationalities = [
    ...new Set(
      f.nationalities
        .split(/[\s,]+/)
        .filter(Boolean)
        .map((c) => c.toUpperCase()),
    ),
  ];
  if (nationalities.length === 0 || nationalities.length > 10 || !nationalities.every((c) => COUNTRY.test(c))) {
    return 'Enter one to ten nationalities as two-letter country codes (ISO 3166-1 alpha-2), such as GB or DE, FR.';
  }
  // printable characters only: it becomes the person's identifier at the relying party (through a pairwise sub)
  if (
    !f.personal_administrative_number ||
    f.personal_administrative_number.length > 64 ||
    /[\p{Cc}]/u.test(f.personal_administrative_number)
  ) {
    return 'Enter a personal administrative number (at most 64 characters).';
  }
  return {
    given_name: f.given_name,
    family_name: f.family_name,
    birthdate: f.birthdate,
    nationalities,
    personal_administrative_number: f.personal_administrative_number,
  };
}
