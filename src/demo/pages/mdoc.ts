/**
 * /demo/mdl, the demo's mDL issuer: GET the form, POST the mDL as a file the dev wallet imports; POST
 * /demo/pid/mdoc, the demo PID as an mdoc, from the /demo/pid form. Demo only: anyone gets one with any name.
 */
import type { Context } from 'koa';
import { readForm } from '../../http/form.js';
import { ProtocolError } from '../../rules/errors.js';
import { isPastCalendarDate } from '../../rules/template.js';
import { html } from '../../interaction/views/html.js';
import { page } from '../page.js';
import { MDL_DOCTYPE, type DemoMdocs, type MdocFile } from '../mdocs.js';
import { checkPid, pidForm, type PidPageDeps } from './pid.js';

/** What the pages use. */
export interface MdocPageDeps {
  baseUrl: string;
  mdocs: DemoMdocs;
  /** the verification types that ask an mDL (verifyOnly, doctype org.iso.18013.5.1.mDL): what the page says they answer */
  ageTypes: string[];
}

const SAMPLE = { given_name: 'Ada', family_name: 'Lovelace', birth_date: '1815-12-10' };
type Fields = typeof SAMPLE;
const FORM_LIMIT = 16 * 1024;

export function mdlForm(ctx: Context, d: MdocPageDeps, values: Fields = SAMPLE, error?: string): void {
  const field = (name: keyof Fields, label: string, extra = html``) =>
    html`<label>${label}<input name="${name}" value="${values[name]}" required${extra}></label>`;
  const checks = d.ageTypes.length
    ? html`<p>Then choose <strong>${d.ageTypes.join(', ')}</strong> under “Age check” on the demo page and present it with <code>npm run wallet -- present '&lt;request link&gt;' --trust keys/verifier-ca.pem</code>: the relying party learns <code>age_over_18</code>, never the birth date.</p>`
    : html`<p class="hint">No verification type of the demo client asks an mDL: add one with <code>verifyOnly: true</code> (docs/operations.md, “Age checks from an mDL”).</p>`;
  page(
    ctx,
    'Demo mDL issuer',
    html`<section class="card demo"><h1>Get a demo mDL</h1>
<p class="hint">A mobile driving licence (ISO/IEC 18013-5 mdoc, doctype <code>${MDL_DOCTYPE}</code>) signed under this demo's test IACA <code>keys/demo-iaca.pem</code>, with <code>age_over_16</code>, <code>age_over_18</code>, <code>age_over_21</code> and <code>age_over_65</code> for the birth date you enter. The service trusts it only because config/demo.yaml lists that IACA in <code>verifier.trustAnchors</code>. Demo only: anyone can get one with any name.</p>
${error && html`<p class="status" role="alert">${error}</p>`}
<form method="post" action="${`${d.baseUrl}/demo/mdl`}">
${field('given_name', 'Given name', html` maxlength="100"`)}
${field('family_name', 'Family name', html` maxlength="100"`)}
${field('birth_date', 'Birth date (a recent one makes the holder under 18)', html` type="date"`)}
<button type="submit">Download the mDL</button></form>
<p>The download, <code>demo-mdl.json</code>, holds the mDL and its device key. Put it into the dev wallet with:</p>
<pre>npm run wallet -- import-mdoc demo-mdl.json</pre>
${checks}
<p><a href="${`${d.baseUrl}/demo`}">Back to the demo</a></p></section>`,
  );
}

export async function mdlFile(ctx: Context, d: MdocPageDeps): Promise<void> {
  const values = await formOf(ctx);
  if (typeof values === 'string') return mdlForm(ctx, d, SAMPLE, values);
  const fields: Fields = {
    given_name: (values.given_name ?? '').trim(),
    family_name: (values.family_name ?? '').trim(),
    birth_date: (values.birth_date ?? '').trim(),
  };
  const wrong = checkPerson(fields);
  if (wrong) {
    ctx.status = 400;
    return mdlForm(ctx, d, fields, wrong);
  }
  download(ctx, 'demo-mdl.json', await d.mdocs.mdl(fields));
}

/** POST /demo/pid/mdoc: the /demo/pid form's PID, as an mdoc file for the dev wallet. */
export async function pidMdocFile(ctx: Context, d: MdocPageDeps & PidPageDeps): Promise<void> {
  const values = await formOf(ctx);
  if (typeof values === 'string') return pidForm(ctx, d, undefined, values);
  const checked = checkPid(values);
  if ('error' in checked) {
    ctx.status = 400;
    return pidForm(ctx, d, checked.fields, checked.error);
  }
  const { claims } = checked;
  download(
    ctx,
    'demo-pid-mdoc.json',
    await d.mdocs.pid({
      given_name: claims.given_name,
      family_name: claims.family_name,
      // PID Rulebook chapter 3: the mdoc's names for the SD-JWT VC's birthdate and nationalities
      birth_date: claims.birthdate,
      nationality: claims.nationalities,
      personal_administrative_number: claims.personal_administrative_number,
    }),
  );
}

/** The form's fields, or what the person is told when it cannot be read. */
async function formOf(ctx: Context): Promise<Record<string, string> | string> {
  try {
    return await readForm(ctx, FORM_LIMIT);
  } catch (err) {
    if (!(err instanceof ProtocolError)) throw err;
    ctx.status = err.status;
    return `The form could not be read: ${err.message}`;
  }
}

function checkPerson(f: Fields): string | undefined {
  if (!f.given_name || f.given_name.length > 100) return 'Enter a given name (at most 100 characters).';
  if (!f.family_name || f.family_name.length > 100) return 'Enter a family name (at most 100 characters).';
  if (!isPastCalendarDate(f.birth_date)) return 'Enter the birth date as YYYY-MM-DD, a day in the past.';
  return undefined;
}

/** A file the browser saves: never cached, never shown inline (it holds a private device key). */
function download(ctx: Context, name: string, file: MdocFile): void {
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Content-Disposition', `attachment; filename="${name}"`);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.type = 'application/json';
  ctx.body = `${JSON.stringify(file, null, 2)}\n`;
}
