import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import type { CredentialType } from '../config/schema.js';
import { generateDocumentSigner, type IssuerCa } from '../keys/issuerCertificate.js';
import { documentSignerKey, type DocumentSignerKey } from '../keys/documentSignerKey.js';
import { MdocSigner } from '../issuance/mdoc.js';
import { PID_MDOC_DOCTYPE } from '../rules/pidMdoc.js';

/** ISO/IEC 18013-5 §7.1: the mDL's doctype and namespace. */
export const MDL_DOCTYPE = 'org.iso.18013.5.1.mDL';
export const MDL_NAMESPACE = 'org.iso.18013.5.1';

/** The ages the demo's credentials carry an age_over_NN for (ISO/IEC 18013-5 §7.2.5; the issuer chooses them). */
const AGES = [16, 18, 21, 65];
/** The demo's mdocs are valid this long. */
const VALID_DAYS = 30;
const DAY = 86_400_000;
/** ISO 3166-1 user-assigned: the demo IACA's countryName, which issuing_country must equal (ISO/IEC 18013-5 §9.3.1). */
const COUNTRY = 'ZZ';

/** What the dev wallet imports (`npm run wallet -- import-mdoc FILE`): the IssuerSigned, its doctype, its device key. */
export interface MdocFile {
  issuerSigned: string;
  doctype: string;
  /** the private P-256 device key the MSO is bound to */
  deviceKey: JWK;
}

/** The person on a demo mdoc. */
export interface MdocPerson {
  given_name: string;
  family_name: string;
  /** YYYY-MM-DD, in the past */
  birth_date: string;
}

export interface DemoMdocs {
  /** an mDL of the person, with age_over_NN elements for their age today */
  mdl(person: MdocPerson): Promise<MdocFile>;
  /** the PID as an mdoc (PID Rulebook chapter 3 element names) */
  pid(person: MdocPerson & { nationality: string[]; personal_administrative_number: string }): Promise<MdocFile>;
}

/** The age in whole years on `today` (UTC calendar) of someone born on `birth` (YYYY-MM-DD). */
export function ageOn(birth: string, today: Date): number {
  const [y, m, d] = birth.split('-').map(Number);
  const years = today.getUTCFullYear() - y;
  const beforeBirthday = today.getUTCMonth() + 1 < m || (today.getUTCMonth() + 1 === m && today.getUTCDate() < d);
  return beforeBirthday ? years - 1 : years;
}

/** age_over_NN for the demo's ages, age_in_years and age_birth_year (ISO/IEC 18013-5 §7.2.5, PID Rulebook §3.1.1). */
export function ageElements(birth: string, today: Date): Record<string, boolean | number> {
  const years = ageOn(birth, today);
  return {
    ...Object.fromEntries(AGES.map((nn) => [`age_over_${nn}`, years >= nn])),
    age_in_years: years,
    age_birth_year: Number(birth.slice(0, 4)),
  };
}

const date = { type: 'date', required: true } as const;
/** how the signer encodes each element that is not a string, number or boolean as it is: dates as full-date */
const SPEC: CredentialType['attributes'] = {
  birth_date: date,
  issue_date: date,
  expiry_date: date,
  issuance_date: date,
};

/**
 * The demo's mdoc issuer (config `demo: true` only): mDLs and mdoc PIDs signed by a document signer of the demo's
 * test IACA (src/demo/iaca.ts), each bound to a device key made here and handed to the holder with it, as the dev
 * wallet imports mdocs issued elsewhere. The service trusts them only because config/demo.yaml lists the IACA.
 */
export function createDemoMdocs(ca: IssuerCa, host: string): DemoMdocs {
  let signer: Promise<DocumentSignerKey> | undefined;
  const current = (): Promise<DocumentSignerKey> => {
    // one document signer per process, made on first use and again when the last one failed
    if (!signer) {
      const made = generateDocumentSigner(ca, host).then((pem) =>
        documentSignerKey(
          { chain: pem.certificate, key: pem.key },
          { chain: 'the demo document signer', key: 'its key' },
        ),
      );
      made.catch(() => (signer = undefined));
      signer = made;
    }
    return signer;
  };
  const mdocSigner = new MdocSigner({ current });

  async function issue(doctype: string, elements: Record<string, unknown>): Promise<MdocFile> {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const now = new Date();
    const { credential } = await mdocSigner.sign({
      doctype,
      namespace: doctype === MDL_DOCTYPE ? MDL_NAMESPACE : doctype,
      attributes: elements,
      spec: SPEC,
      deviceJwk: await exportJWK(publicKey),
      validFrom: now,
      validUntil: new Date(now.getTime() + VALID_DAYS * DAY),
    });
    return { issuerSigned: credential, doctype, deviceKey: await exportJWK(privateKey) };
  }

  const today = () => new Date().toISOString().slice(0, 10);
  const until = () => new Date(Date.now() + VALID_DAYS * DAY).toISOString().slice(0, 10);
  return {
    mdl: (p) =>
      issue(MDL_DOCTYPE, {
        family_name: p.family_name,
        given_name: p.given_name,
        birth_date: p.birth_date,
        issue_date: today(),
        expiry_date: until(),
        issuing_country: COUNTRY,
        issuing_authority: 'VC OpenID Provider demo',
        document_number: `DEMO-${randomUUID().slice(0, 8).toUpperCase()}`,
        ...ageElements(p.birth_date, new Date()),
      }),
    pid: (p) =>
      issue(PID_MDOC_DOCTYPE, {
        family_name: p.family_name,
        given_name: p.given_name,
        birth_date: p.birth_date,
        nationality: p.nationality,
        personal_administrative_number: p.personal_administrative_number,
        issuance_date: today(),
        expiry_date: until(),
        issuing_country: COUNTRY,
        issuing_authority: 'VC OpenID Provider demo',
        ...ageElements(p.birth_date, new Date()),
      }),
  };
}
